// The board top: gbnn_circuit behind an 8N1 UART (uart.sv), so a board needs a clock and two
// pins. Request/response frames, bytes on the line (the manual's FPGA chapter, "UART probe
// interface"):
//
//   host → FPGA                                          FPGA → host
//   'S' sym[0] … sym[C-1]                (store)         's'
//   'P' rule γ[4] max_iter[4] sym[0] … sym[C-1] (probe)  'p' out[⌈N/8⌉] iterations[4] flags
//   'Z'                                  (reset: W, state and registers to zero)    'z'
//   'P' with a rule the build lacks (sum-of-sum when SUM_OF_SUM = 0)                 '!'
//   any other byte                                       '?'
//
// A symbol is one byte, 0 … L−1; any byte ≥ L is an erased cluster (0xFF by convention). γ,
// max_iter and iterations are little-endian u32; `out` is the output register, bit i = neuron
// i = c·L + l, byte 0 first; flags bit 0 is "converged". The reply to a probe leaves once the
// circuit reaches Done, so it carries the retrieved state without polling.
//
// Frames are parsed while a reply is still going out, and a parsed frame waits for the
// transmitter before it runs; a host may therefore stream stores (a 1-byte ack is shorter than
// the next frame) but waits for a probe's reply before its next frame (a byte that arrives
// while a parsed frame waits is dropped).
module gbnn_uart #(
    parameter int C = 3,
    parameter int L = 3,
    parameter bit SUM_OF_SUM = 1,                  // gbnn_circuit's build option
    parameter int CLKS_PER_BIT = 104,              // 12 MHz / 115 200 baud
    localparam int N = C * L,
    localparam int SYMW = $clog2(L + 1),
    localparam int NB = (N + 7) / 8,               // bytes of the output register
    localparam int PB = 9 + C,                     // payload bytes of a probe (the longest frame)
    localparam int RB = 1 + NB + 4 + 1             // bytes of a probe's reply
) (
    input  logic clk,
    input  logic rx,
    output logic tx
);
  // Power-on reset: iCE40 and ECP5 flip-flops configure to zero, so the counter starts at 0 and
  // holds the circuit in reset for 16 clocks (the UART line settles meanwhile).
  logic [4:0] por_q = '0;
  always_ff @(posedge clk) if (!por_q[4]) por_q <= por_q + 1'b1;
  wire por = !por_q[4];

  logic [7:0] rx_data;
  logic       rx_valid;
  uart_rx #(.CLKS_PER_BIT(CLKS_PER_BIT)) u_rx (.clk, .rst(por), .rx, .data(rx_data), .valid(rx_valid));

  logic [7:0] tx_data;
  logic       tx_send, tx_ready;
  uart_tx #(.CLKS_PER_BIT(CLKS_PER_BIT)) u_tx (.clk, .rst(por), .data(tx_data), .send(tx_send),
                                               .ready(tx_ready), .tx);

  // ---- the parser: a command byte, then its payload shifted in from the top, so that the last
  // C bytes (the symbols) always end at the top and a probe's first byte (the rule) at byte 0.
  typedef enum logic [2:0] {CMD, PAYLOAD, RUN, WAIT} pstate_t;
  pstate_t    ps_q;
  logic [7:0] op_q;
  logic [$clog2(PB + 1)-1:0] need_q;
  logic [PB*8-1:0] buf_q;

  // ---- the reply: a byte shift register sent from byte 0, and its length.
  logic [RB*8-1:0] rep_q;
  logic [$clog2(RB + 1)-1:0] rep_n_q;
  logic            reply_idle;
  assign reply_idle = rep_n_q == 0;

  // ---- the circuit's inputs, decoded from the frame.
  logic [C*SYMW-1:0] sym;
  always_comb
    for (int c = 0; c < C; c++) begin
      logic [7:0] b;
      b = buf_q[(PB - C + c)*8 +: 8];
      sym[c*SYMW +: SYMW] = b >= 8'(L) ? '1 : b[SYMW-1:0];
    end

  localparam bit [3:0] RULES = {3'b111, SUM_OF_SUM};  // the rules this build serves
  logic        rule_ok;
  assign rule_ok = RULES[buf_q[1:0]];
  logic        c_rst, c_store, c_start, converged;
  logic [2:0]  phase;
  logic [N-1:0] out;
  logic [31:0] iterations;
  gbnn_circuit #(.C(C), .L(L), .SUM_OF_SUM(SUM_OF_SUM), .RULES(RULES)) core (
      .clk, .rst(c_rst), .store(c_store), .start(c_start), .sym,
      .rule(buf_q[1:0]), .gamma(buf_q[8 +: 32]), .max_iter(buf_q[40 +: 32]),
      /* verilator lint_off PINCONNECTEMPTY */  // the replay's debug ports, unused here
      .phase, .state(), .out, .scores(), .iterations, .converged, .edges()
      /* verilator lint_on PINCONNECTEMPTY */
  );

  // The start clock moves the circuit to Load, so in WAIT a Done is this probe's.
  localparam logic [2:0] DONE = 6;

  always_comb begin
    c_rst = por || (ps_q == RUN && reply_idle && op_q == "Z");
    c_store = ps_q == RUN && reply_idle && op_q == "S";
    c_start = ps_q == RUN && reply_idle && op_q == "P" && rule_ok;
    tx_send = !reply_idle && tx_ready;
    tx_data = rep_q[7:0];
  end

  always_ff @(posedge clk) begin
    if (por) begin
      ps_q <= CMD;
      rep_n_q <= '0;
    end else begin
      if (tx_send) begin
        rep_q <= rep_q >> 8;
        rep_n_q <= rep_n_q - 1'b1;
      end
      case (ps_q)
        CMD:
          if (rx_valid) begin
            op_q <= rx_data;
            if (rx_data == "S") begin
              need_q <= ($clog2(PB + 1))'(C);
              ps_q <= PAYLOAD;
            end else if (rx_data == "P") begin
              need_q <= ($clog2(PB + 1))'(PB);
              ps_q <= PAYLOAD;
            end else ps_q <= RUN;        // 'Z' resets; anything else is answered '?'
          end
        PAYLOAD:
          if (rx_valid) begin
            buf_q <= {rx_data, buf_q[PB*8-1:8]};
            need_q <= need_q - 1'b1;
            if (need_q == 1) ps_q <= RUN;
          end
        RUN:
          if (reply_idle) begin          // one clock: store, start or reset, then the reply
            if (op_q == "P" && rule_ok) ps_q <= WAIT;
            else begin
              rep_q <= (RB*8)'(op_q == "S" ? "s" : op_q == "Z" ? "z" : op_q == "P" ? "!" : "?");
              rep_n_q <= 1;
              ps_q <= CMD;
            end
          end
        WAIT:
          if (phase == DONE) begin
            rep_q <= {7'b0, converged, iterations, (NB*8)'(out), "p"};
            rep_n_q <= ($clog2(RB + 1))'(RB);
            ps_q <= CMD;
          end
        default: ps_q <= CMD;
      endcase
    end
  end
endmodule
