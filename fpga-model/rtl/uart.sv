/* verilator lint_off DECLFILENAME */  // two modules, uart_rx and uart_tx, in one file
// 8N1 UART receiver and transmitter for the probe interface (gbnn_uart.sv): one start bit, eight
// data bits least significant first, one stop bit, `CLKS_PER_BIT` clocks per bit (12 MHz / 115 200
// baud = 104 on the iCE40-HX8K breakout board; the Verilator test uses a few clocks per bit so
// that thousands of frames simulate in seconds — the counters are the same logic).

// Receiver: a two-flip-flop synchroniser (the line is asynchronous to the clock), a start bit
// confirmed at its middle, data sampled at each bit's middle, and a byte delivered (`valid` for
// one clock) only if its stop bit is high — a framing error drops the byte, and the receiver
// waits for the line to go high again before it looks for the next start bit (`idle_q`), so
// that a low stop bit or a break is not taken for one.
module uart_rx #(
    parameter int CLKS_PER_BIT = 104
) (
    input  logic       clk,
    input  logic       rst,
    input  logic       rx,
    output logic [7:0] data,
    output logic       valid
);
  localparam int CW = $clog2(CLKS_PER_BIT + 1);
  logic [1:0] sync_q;
  logic       busy_q, idle_q;           // idle_q: the line has been high since the last frame
  logic [3:0] bit_q;                  // 0 start, 1–8 data, 9 stop
  logic [CW-1:0] cnt_q;
  logic [7:0] sh_q;
  wire line = sync_q[1];

  always_ff @(posedge clk) begin
    sync_q <= {sync_q[0], rx};
    valid <= 1'b0;
    if (rst) begin
      sync_q <= 2'b11;
      busy_q <= 1'b0;
      idle_q <= 1'b0;
      bit_q <= '0;
      cnt_q <= '0;
    end else if (!busy_q) begin
      idle_q <= idle_q | line;
      if (!line && idle_q) begin     // a start bit: its middle is half a bit on
        busy_q <= 1'b1;
        bit_q <= '0;
        cnt_q <= CW'(CLKS_PER_BIT / 2 - 1);
      end
    end else if (cnt_q != 0) begin
      cnt_q <= cnt_q - 1'b1;
    end else begin
      cnt_q <= CW'(CLKS_PER_BIT - 1);
      bit_q <= bit_q + 1'b1;
      if (bit_q == 0) begin
        if (line) busy_q <= 1'b0;     // a glitch, not a start bit
        idle_q <= 1'b0;
      end else if (bit_q <= 8) begin
        sh_q <= {line, sh_q[7:1]};
      end else begin                  // the stop bit's middle: deliver, or drop on a framing error
        busy_q <= 1'b0;
        data <= sh_q;
        valid <= line;
      end
    end
  end
endmodule

// Transmitter: `send` with `ready` high latches `data` and starts its start bit at once; the
// line idles high; `ready` returns when the stop bit has lasted its full bit time.
module uart_tx #(
    parameter int CLKS_PER_BIT = 104
) (
    input  logic       clk,
    input  logic       rst,
    input  logic [7:0] data,
    input  logic       send,
    output logic       ready,
    output logic       tx
);
  localparam int CW = $clog2(CLKS_PER_BIT + 1);
  logic [8:0] sh_q;                   // {stop, data} after the start bit, shifted out from bit 0
  logic [3:0] left_q;                 // bits still to put on the line
  logic [CW-1:0] cnt_q;               // clocks left of the bit on the line

  assign ready = left_q == 0 && cnt_q == 0;
  always_ff @(posedge clk) begin
    if (rst) begin
      tx <= 1'b1;
      left_q <= '0;
      cnt_q <= '0;
    end else if (cnt_q != 0) begin
      cnt_q <= cnt_q - 1'b1;
    end else if (left_q != 0) begin
      tx <= sh_q[0];
      sh_q <= {1'b1, sh_q[8:1]};
      left_q <= left_q - 1'b1;
      cnt_q <= CW'(CLKS_PER_BIT - 1);
    end else if (send) begin
      tx <= 1'b0;
      sh_q <= {1'b1, data};
      left_q <= 4'd9;
      cnt_q <= CW'(CLKS_PER_BIT - 1);
    end
  end
endmodule
