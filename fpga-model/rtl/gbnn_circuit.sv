// The fully-parallel GBNN circuit of fpga-model/src/circuit.rs, register for register and clock
// for clock: Circuit::store is a clock with `store` high, Circuit::start a clock with `start`
// high, every other clock is Circuit::tick. Written once; C and L are parameters (C·L ≤ 400, the
// cycle model's compile-time limit). Bit-exact against the model: `make fpga-verilate`.
//
// Build option SUM_OF_SUM = 0 leaves out the sum-of-sum datapath (the adder trees, score
// registers and WTA comparator trees): the sum-of-max-only circuit, serving sum-of-max,
// bail-out-early and joint. RULES is the set of rules the instantiating design will start (bit r
// = rule r); asking for sum-of-sum from a build without it is an elaboration error, and at run
// time a `start` with a rule outside RULES is ignored (the phase stays where it was).
//
// Encodings (the core's): rule 0 sum-of-sum, 1 sum-of-max, 2 bail-out-early, 3 joint; phase 0
// Idle, 1 Load, 2 Score, 3 Select, 4 Update, 5 Unload, 6 Done (fpga-model's Phase, in order).
// Neuron i = c·L + l is bit i of `state`/`out`; a symbol is SYMW bits, all ones = erased.
module gbnn_circuit #(
    parameter int C = 3,
    parameter int L = 3,
    parameter bit SUM_OF_SUM = 1,
    parameter bit [3:0] RULES = {3'b111, SUM_OF_SUM},
    localparam int N = C * L,
    localparam int SYMW = $clog2(L + 1),           // room for all ones as "erased"
    localparam int M = (C - 1) * L,                // inputs of a neuron from other clusters
    localparam int GMAX = M + 1,                   // Geometry::effective_gamma's cap
    localparam int GW = $clog2(GMAX + 1),
    localparam int SW = $clog2(M + GMAX + 1),      // widest score: γ_max + every other neuron
    localparam int E = C * (C - 1) / 2 * L * L     // W is symmetric, no intra-cluster edges
) (
    input  logic                     clk,
    input  logic                     rst,       // synchronous: every register to zero, Idle
    input  logic                     store,     // this clock ORs the clique of `sym` into W
    input  logic                     start,     // this clock latches probe `sym`, rule, params
    input  logic [C*SYMW-1:0]        sym,       // symbol of cluster c at [c*SYMW +: SYMW]
    input  logic [1:0]               rule,
    input  logic [31:0]              gamma,     // Params::gamma (u32), saturated as the core does
    input  logic [31:0]              max_iter,  // Params::max_iter (u32)
    output logic [2:0]               phase,
    output logic [N-1:0]             state,
    output logic [N-1:0]             out,
    output logic [N*SW-1:0]          scores,    // score of neuron i at [i*SW +: SW]
    output logic [31:0]              iterations,
    output logic                     converged,
    output logic [E-1:0]             edges      // W, one bit per edge: see `EDGE_AT`
);
  localparam int LIMIT = N + 2;               // Rule::iteration_limit of the non-sum-of-sum rules

  localparam logic [2:0] IDLE = 0, LOAD = 1, SCORE = 2, SELECT = 3, UPDATE = 4, UNLOAD = 5, DONE = 6;
  localparam logic [1:0] SOS = 0, SOM = 1, BOE = 2, JOINT = 3;

  initial begin
    if (C * L > 400 || C < 2 || L < 1) $fatal(1, "gbnn_circuit: need C >= 2, L >= 1, C*L <= 400");
  end
  // Elaboration-time checks (generate-level $error: Verilator and Yosys stop on them).
  if (RULES[0] && !SUM_OF_SUM) begin : g_refuse_sos
    $error("gbnn_circuit: RULES asks for sum-of-sum (bit 0) but SUM_OF_SUM = 0 left its adders and WTA out");
  end
  if (RULES == 4'b0000) begin : g_refuse_none
    $error("gbnn_circuit: RULES is empty");
  end

  // Edge (a, la)–(b, lb), a < b, is flip-flop `EDGE_AT(a, b, la, lb): pair blocks in (a, b)
  // order (pair (a, b) is number a(2C − a − 1)/2 + b − a − 1), each L×L, row la, column lb.
  // A macro, not a function: Yosys evaluates each constant function call by interpreting a
  // copy of its body, and with one call per row operation that was 90 % of its elaboration
  // time (8×8: 70 s of CPU with the function, 4 s with the macro; see the manual).
  `define EDGE_AT(a, b, la, lb) (((((a) * (2 * C - (a) - 1)) / 2 + ((b) - (a) - 1)) * L + (la)) * L + (lb))

  // ---- registers (Circuit's fields) ----
  logic [E-1:0]        w_q;
  logic [N-1:0]        v_q, out_q;
  logic [N*SW-1:0]     score_q;            // score i at [i*SW +: SW]
  logic [C*SYMW-1:0]   probe_q;
  logic [1:0]          rule_q;
  /* verilator lint_off UNUSEDSIGNAL */     // unread in a build without sum-of-sum
  logic [GW-1:0]       gamma_q;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [31:0]         max_iter_q;
  logic [2:0]          phase_q;
  logic [31:0]         t_q;                   // the Schedule: updates run, converged
  logic                conv_q;

  // ---- probe decoding ----
  logic [C-1:0] erased;
  logic [N-1:0] onehot;                        // the known symbols' neurons
  always_comb begin
    for (int c = 0; c < C; c++) begin
      erased[c] = probe_q[c*SYMW +: SYMW] == '1;
      for (int l = 0; l < L; l++) onehot[c*L+l] = !erased[c] && probe_q[c*SYMW +: SYMW] == SYMW'(l);
    end
  end

  // The message being stored, decoded.
  logic [N-1:0] msg_hot;
  always_comb begin
    for (int c = 0; c < C; c++)
      for (int l = 0; l < L; l++) msg_hot[c*L+l] = sym[c*SYMW +: SYMW] == SYMW'(l);
  end

  // Storing: an edge's flip-flop is set when the message holds both its neurons (two decoder
  // outputs, one AND); every edge of the clique in one clock.
  logic [E-1:0] w_set;
  always_comb begin
    w_set = w_q;
    for (int a = 0; a < C; a++)
      for (int b = a + 1; b < C; b++)
        for (int la = 0; la < L; la++)
          if (msg_hot[a*L+la]) w_set[`EDGE_AT(a, b, la, 0) +: L] = w_q[`EDGE_AT(a, b, la, 0) +: L] | msg_hot[b*L +: L];
  end

  // Load: known clusters one-hot; erased all on (sum-of-max, bail-out-early) or off.
  logic [N-1:0] init_v;
  always_comb begin
    for (int c = 0; c < C; c++)
      init_v[c*L +: L] = erased[c] ? {L{rule_q == SOM || rule_q == BOE}} : onehot[c*L +: L];
  end

  // ---- sum-of-max datapath (also bail-out-early and both joint updates) ----
  // sup[(a*C+b)*L + l]: some active neuron of cluster b is wired to neuron (a, l) (an OR tree
  // of L AND2). For a < b that is row l of block (a, b) against v_b; for a > b it is column l of
  // block (b, a), computed as the OR of the block's rows whose neuron of b is active — the same
  // AND2s and OR trees, written as L-bit vector operations so that no bit is transposed one
  // statement at a time (Yosys's elaboration time grew as N⁴ with per-bit statements).
  logic [C*C*L-1:0] sup;
  always_comb begin : b_sup
    logic [L-1:0] acc;
    sup = '0;
    for (int a = 0; a < C; a++)
      for (int b = 0; b < C; b++) begin
        acc = '0;
        if (a < b)
          for (int la = 0; la < L; la++) acc[la] = |(w_q[`EDGE_AT(a, b, la, 0) +: L] & v_q[b*L +: L]);
        else if (a > b)
          for (int lb = 0; lb < L; lb++) acc = acc | (w_q[`EDGE_AT(b, a, lb, 0) +: L] & {L{v_q[b*L+lb]}});
        sup[(a*C+b)*L +: L] = acc;
      end
  end
  // Neuron (a, l) stays on iff (joint's first pass: regardless of v) every cluster of the
  // update's check set but a supports it; joint freezes known clusters.
  logic [C-1:0] check;
  logic         first_pass, freeze_known;
  always_comb begin
    first_pass = rule_q == JOINT && t_q == 0;
    freeze_known = rule_q == JOINT;
    check = rule_q != JOINT ? '1 : first_pass ? ~erased : erased;
  end
  logic [N-1:0] som_next;
  always_comb begin : b_som
    logic ok;
    for (int a = 0; a < C; a++)
      for (int l = 0; l < L; l++) begin
        ok = first_pass | v_q[a*L+l];
        for (int b = 0; b < C; b++)
          if (b != a && check[b]) ok = ok & sup[(a*C+b)*L + l];
        som_next[a*L+l] = (freeze_known && !erased[a]) ? v_q[a*L+l] : ok;
      end
  end

  // ---- sum-of-sum datapath: stage 1 the adders (score registers), stage 2 the WTA ----
  // Both are balanced trees, depth about ⌈log₂ N⌉ adders and ⌈log₂ L⌉ comparators (heap order:
  // node k adds or compares nodes 2k and 2k+1). The adder tree's leaves count 4 inputs each (a
  // 4:3 compressor, three LUT4s); zero inputs pad to a power of two and vanish in synthesis (an
  // add of zero, a maximum with zero: scores are never negative). Left out when SUM_OF_SUM = 0:
  // the scores stay zero (constant registers, removed by synthesis).
  logic [N*SW-1:0] score_d;
  logic [N-1:0] wta_next;
  if (SUM_OF_SUM) begin : g_sos
    // W seen as rows: row i is neuron i's N inputs, at [i*N +: N]; the lower triangle is the
    // upper one's flip-flops transposed (one flip-flop per edge), the diagonal blocks are zero.
    // Pure wiring; loops rather than generate blocks so that Verilator keeps them rolled; every
    // array a packed vector (Yosys turns an unpacked array written in a loop into registers
    // with an address decoder per write).
    logic [N*N-1:0] wrow;
    always_comb begin
      /* verilator lint_off WIDTHCONCAT */  // N² bits by design (160 000 at 8×50)
      wrow = '0;
      /* verilator lint_on WIDTHCONCAT */
      for (int i = 0; i < N; i++)
        for (int b = 0; b < C; b++)
          if (i / L < b) wrow[i*N + b*L +: L] = w_q[`EDGE_AT(i / L, b, i % L, 0) +: L];
          else if (i / L > b)
            for (int lb = 0; lb < L; lb++) wrow[i*N + b*L + lb] = w_q[`EDGE_AT(b, i / L, lb, 0) + i % L];
    end
    localparam int NP = N <= 4 ? 4 : 1 << $clog2(N);
    localparam int NG = NP / 4;
    localparam int LP = 1 << $clog2(L);
    function automatic logic [SW-1:0] popcount(input logic [N-1:0] x);
      logic [NP-1:0] xp;
      logic [2*NG*SW-1:0] t;                   // node k at [k*SW +: SW]
      xp = NP'(x);
      t = '0;
      for (int k = 0; k < NG; k++) t[(NG+k)*SW +: SW] = SW'($countones(xp[4*k +: 4]));
      for (int k = NG - 1; k >= 1; k--) t[k*SW +: SW] = t[2*k*SW +: SW] + t[(2*k+1)*SW +: SW];
      popcount = t[SW +: SW];
    endfunction
    always_comb begin
      for (int i = 0; i < N; i++)
        score_d[i*SW +: SW] = (v_q[i] ? SW'(gamma_q) : '0) + popcount(wrow[i*N +: N] & v_q);
    end
    always_comb begin : b_wta
      logic [2*LP*SW-1:0] m;                   // node k at [k*SW +: SW]
      m = '0;
      for (int c = 0; c < C; c++) begin
        // select_max: the maximum from 0 up, so a cluster of zeros stays all on.
        for (int k = 0; k < LP; k++) m[(LP+k)*SW +: SW] = k < L ? score_q[(c*L+k)*SW +: SW] : '0;
        for (int k = LP - 1; k >= 1; k--)
          m[k*SW +: SW] = m[2*k*SW +: SW] > m[(2*k+1)*SW +: SW] ? m[2*k*SW +: SW] : m[(2*k+1)*SW +: SW];
        for (int l = 0; l < L; l++) wta_next[c*L+l] = score_q[(c*L+l)*SW +: SW] == m[SW +: SW];
      end
    end
  end else begin : g_no_sos
    assign score_d = '0;
    assign wta_next = '0;
  end

  // ---- controller: Schedule::next_update after an update, as Circuit::next_phase ----
  logic [31:0] limit;
  assign limit = rule_q == SOS ? max_iter_q : 32'(LIMIT);
  logic [N-1:0] upd_next;
  logic         same;                          // the "changed" comparator, inverted
  logic [31:0]  t_next;
  logic [2:0]   iterate, after_load, after_update;
  always_comb begin
    upd_next = phase_q == SELECT ? wta_next : som_next;
    same = upd_next == v_q;
    t_next = t_q + 32'd1;
    iterate = rule_q == SOS ? SCORE : UPDATE;
    after_load = limit == 0 ? UNLOAD : iterate;
    after_update = (same || t_next >= limit) ? UNLOAD : iterate;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      /* verilator lint_off WIDTHCONCAT */  // W is wide by design: C(C−1)/2·L² bits
      w_q <= '0;
      /* verilator lint_on WIDTHCONCAT */
      v_q <= '0; out_q <= '0; rule_q <= JOINT; gamma_q <= GW'(1); max_iter_q <= 32'd20;
      phase_q <= IDLE; t_q <= '0; conv_q <= 1'b0;
      score_q <= '0;
      probe_q <= '0;
    end else if (store) begin
      w_q <= w_set;
    end else if (start && RULES[rule]) begin
      probe_q <= sym;
      rule_q <= rule;
      gamma_q <= gamma > 32'(GMAX) ? GW'(GMAX) : GW'(gamma);
      max_iter_q <= max_iter;
      phase_q <= LOAD;
    end else begin
      case (phase_q)
        LOAD: begin
          v_q <= init_v;
          t_q <= '0;
          conv_q <= 1'b0;
          phase_q <= after_load;
        end
        SCORE: begin
          score_q <= score_d;
          phase_q <= SELECT;
        end
        SELECT, UPDATE: begin
          v_q <= upd_next;
          t_q <= t_next;
          conv_q <= same;
          phase_q <= after_update;
        end
        UNLOAD: begin
          out_q <= v_q;
          phase_q <= DONE;
        end
        default: ;                            // Idle, Done: hold
      endcase
    end
  end

  assign phase = phase_q;
  assign state = v_q;
  assign out = out_q;
  assign iterations = t_q;
  assign converged = conv_q;
  assign edges = w_q;
  assign scores = score_q;
  `undef EDGE_AT
endmodule
