// One cluster of gbnn_circuit: the L neurons' next states and scores from what the cluster
// pairs (gbnn_pair) computed, and the cluster's winner-take-all. Combinational; the registers
// stay in gbnn_circuit. Every cluster of a size is the same module with the same parameters
// (the other clusters are numbered k = 0 … C−2, skipping this one), so a hierarchical synthesis
// maps it once (fpga-model/rtl/synth.py).
module gbnn_cluster #(
    parameter int C = 3,
    parameter int L = 3,
    parameter bit SUM_OF_SUM = 1,
    localparam int CW = $clog2(L + 1),         // gbnn_pair's partial counts
    localparam int M = (C - 1) * L,
    localparam int GMAX = M + 1,
    localparam int GW = $clog2(GMAX + 1),
    localparam int SW = $clog2(M + GMAX + 1)   // gbnn_circuit's score width
) (
    input  logic [(C-1)*L-1:0]    sup,         // support from other cluster k at [k*L +: L]
    input  logic [C-2:0]          check,       // the update's check set over the other clusters
    input  logic [L-1:0]          v,           // this cluster's state
    input  logic                  first_pass,  // joint's first pass: regardless of v
    input  logic                  hold,        // joint and this cluster known: frozen
    /* verilator lint_off UNUSEDSIGNAL */      // unread in a build without sum-of-sum
    input  logic [(C-1)*L*CW-1:0] cnt,         // active neighbours in k of neuron l at [(k*L+l)*CW +: CW]
    input  logic [GW-1:0]         gamma,
    input  logic [L*SW-1:0]       score_q,     // the score registers of this cluster
    /* verilator lint_on UNUSEDSIGNAL */
    output logic [L-1:0]          som_next,
    output logic [L*SW-1:0]       score_d,
    output logic [L-1:0]          wta_next
);
  // Sum-of-max (also bail-out-early and both joint updates): neuron l stays on iff every cluster
  // of the check set supports it (joint's first pass: regardless of its own bit).
  always_comb begin : b_som
    logic ok;
    for (int l = 0; l < L; l++) begin
      ok = first_pass | v[l];
      for (int k = 0; k < C - 1; k++)
        if (check[k]) ok = ok & sup[k*L + l];
      som_next[l] = hold ? v[l] : ok;
    end
  end

  if (SUM_OF_SUM) begin : g_sos
    // Score: γ·v_l plus the partial counts of the C − 1 other clusters, a balanced adder tree
    // (zero leaves pad to a power of two and vanish). Heap order: node k adds 2k and 2k + 1.
    localparam int KP = C - 1 <= 1 ? 1 : 1 << $clog2(C - 1);
    localparam int LP = 1 << $clog2(L);
    always_comb begin : b_score
      logic [2*KP*SW-1:0] t;                   // node k at [k*SW +: SW]
      for (int l = 0; l < L; l++) begin
        t = '0;
        for (int k = 0; k < C - 1; k++) t[(KP+k)*SW +: SW] = SW'(cnt[(k*L+l)*CW +: CW]);
        for (int k = KP - 1; k >= 1; k--) t[k*SW +: SW] = t[2*k*SW +: SW] + t[(2*k+1)*SW +: SW];
        score_d[l*SW +: SW] = (v[l] ? SW'(gamma) : '0) + t[SW +: SW];
      end
    end
    // Winner-take-all: the maximum from 0 up (select_max: a cluster of zeros stays all on), a
    // balanced comparator tree, then an equality comparator per neuron.
    always_comb begin : b_wta
      logic [2*LP*SW-1:0] m;                   // node k at [k*SW +: SW]
      m = '0;
      for (int k = 0; k < LP; k++) m[(LP+k)*SW +: SW] = k < L ? score_q[k*SW +: SW] : '0;
      for (int k = LP - 1; k >= 1; k--)
        m[k*SW +: SW] = m[2*k*SW +: SW] > m[(2*k+1)*SW +: SW] ? m[2*k*SW +: SW] : m[(2*k+1)*SW +: SW];
      for (int l = 0; l < L; l++) wta_next[l] = score_q[l*SW +: SW] == m[SW +: SW];
    end
  end else begin : g_no_sos
    assign score_d = '0;
    assign wta_next = '0;
  end
endmodule
