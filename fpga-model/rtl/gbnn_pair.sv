// One cluster pair (a, b), a < b, of gbnn_circuit: the L×L weight flip-flops of block (a, b) of
// W and everything computed from that block alone — the sum-of-max support each neuron of a
// gets from cluster b and each neuron of b from cluster a (an OR of L AND2 per neuron and
// direction), and, with SUM_OF_SUM, the same AND2s counted (the partial popcount that neuron's
// adder tree sums over the other clusters). Every pair of a size is the same module with the
// same parameters, so a hierarchical synthesis maps it once (fpga-model/rtl/synth.py).
//
// Edge (a, la)–(b, lb) is bit la·L + lb of `w` (row la, column lb), which is gbnn_circuit's
// EDGE_AT order within the pair's block.
module gbnn_pair #(
    parameter int L = 3,
    parameter bit SUM_OF_SUM = 1,
    localparam int CW = $clog2(L + 1)          // a count of 0 … L
) (
    input  logic            clk,
    input  logic            rst,                // synchronous: W to zero
    input  logic            store,              // OR the clique of the message into W
    input  logic [L-1:0]    hot_a,              // the stored message's neuron of cluster a, one-hot
    input  logic [L-1:0]    hot_b,
    input  logic [L-1:0]    v_a,                // the state of cluster a
    input  logic [L-1:0]    v_b,
    output logic [L*L-1:0]  w,
    output logic [L-1:0]    sup_a,              // neuron (a, la) has an active neighbour in b
    output logic [L-1:0]    sup_b,              // neuron (b, lb) has an active neighbour in a
    output logic [L*CW-1:0] cnt_a,              // its number of active neighbours in b, [la*CW +: CW]
    output logic [L*CW-1:0] cnt_b
);
  // Storing: an edge's flip-flop is set when the message holds both its neurons.
  always_ff @(posedge clk)
    if (rst) w <= '0;
    else if (store)
      for (int la = 0; la < L; la++) w[la*L +: L] <= w[la*L +: L] | (hot_b & {L{hot_a[la]}});

  // Rows against v_b give a's support; the OR of the rows whose neuron of a is active gives b's
  // (L-bit vector operations: no bit is transposed one statement at a time).
  always_comb begin
    sup_b = '0;
    for (int la = 0; la < L; la++) begin
      sup_a[la] = |(w[la*L +: L] & v_b);
      sup_b = sup_b | (w[la*L +: L] & {L{v_a[la]}});
    end
  end

  if (SUM_OF_SUM) begin : g_count
    // A balanced adder tree with 4-input leaves (a 4:3 compressor is three LUT4s); zero inputs
    // pad to a power of two and vanish in synthesis. Heap order: node k adds 2k and 2k + 1.
    localparam int LP = L <= 4 ? 4 : 1 << $clog2(L);
    localparam int NG = LP / 4;
    function automatic logic [CW-1:0] popcount(input logic [L-1:0] x);
      logic [LP-1:0] xp;
      logic [2*NG*CW-1:0] t;                   // node k at [k*CW +: CW]
      xp = LP'(x);
      t = '0;
      for (int k = 0; k < NG; k++) t[(NG+k)*CW +: CW] = CW'($countones(xp[4*k +: 4]));
      for (int k = NG - 1; k >= 1; k--) t[k*CW +: CW] = t[2*k*CW +: CW] + t[(2*k+1)*CW +: CW];
      popcount = t[CW +: CW];
    endfunction
    // Column lb of the block, gathered inside the module (L² wires, no logic).
    logic [L*L-1:0] wt;                        // column lb at [lb*L +: L]
    always_comb
      for (int la = 0; la < L; la++)
        for (int lb = 0; lb < L; lb++) wt[lb*L + la] = w[la*L + lb];
    always_comb
      for (int l = 0; l < L; l++) begin
        cnt_a[l*CW +: CW] = popcount(w[l*L +: L] & v_b);
        cnt_b[l*CW +: CW] = popcount(wt[l*L +: L] & v_a);
      end
  end else begin : g_no_count
    assign cnt_a = '0;
    assign cnt_b = '0;
  end
endmodule
