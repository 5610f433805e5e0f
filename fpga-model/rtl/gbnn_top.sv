// The synthesis top: gbnn_circuit behind a byte-wide host port, so that any size places on a
// small package (about 31 pins) and no register is trimmed for want of a pin. The host shifts
// {max_iter, gamma, rule, sym} in a byte at a time (`ld`), pulses `store` or `start`, waits for
// phase Done and reads the output register and the iteration counter a byte at a time (`addr`).
// A UART front end (8N1 receiver/transmitter feeding `din`/`dout`) is all a board needs more.
module gbnn_top #(
    parameter int C = 3,
    parameter int L = 3,
    parameter bit SUM_OF_SUM = 1,                  // gbnn_circuit's build option
    localparam int N = C * L,
    localparam int SYMW = $clog2(L + 1),
    localparam int CMDW = 32 + 32 + 2 + C * SYMW,  // max_iter, gamma, rule, symbols
    localparam int RDB = (N + 32 + 7) / 8,         // bytes of {iterations, out}
    localparam int AW = $clog2(RDB)
) (
    input  logic       clk,
    input  logic       rst,
    input  logic       ld,          // shift `din` into the command register
    input  logic [7:0] din,
    input  logic       store,
    input  logic       start,
    input  logic [AW-1:0] addr,     // byte of {iterations, out} to show on `dout`
    output logic [7:0] dout,
    output logic [2:0] phase,
    output logic       converged
);
  logic [CMDW-1:0] cmd_q;
  always_ff @(posedge clk)
    if (rst) cmd_q <= '0;
    else if (ld) cmd_q <= {cmd_q[CMDW-9:0], din};

  logic [N-1:0] out;
  logic [31:0] iterations;
  gbnn_circuit #(.C(C), .L(L), .SUM_OF_SUM(SUM_OF_SUM)) core (
      .clk, .rst, .store, .start,
      .sym(cmd_q[C*SYMW-1:0]),
      .rule(cmd_q[C*SYMW +: 2]),
      .gamma(cmd_q[C*SYMW+2 +: 32]),
      .max_iter(cmd_q[C*SYMW+34 +: 32]),
      /* verilator lint_off PINCONNECTEMPTY */  // debug ports of the replay, unused here
      .phase, .state(), .out, .scores(), .iterations, .converged, .edges()
      /* verilator lint_on PINCONNECTEMPTY */
  );

  logic [RDB*8-1:0] rd;
  assign rd = (RDB * 8)'({iterations, out});
  always_ff @(posedge clk) dout <= rd[addr*8 +: 8];
endmodule
