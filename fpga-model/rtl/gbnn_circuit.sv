// The fully-parallel GBNN circuit of fpga-model/src/circuit.rs, register for register and clock
// for clock: Circuit::store is a clock with `store` high, Circuit::start a clock with `start`
// high, every other clock is Circuit::tick. Written once; C and L are parameters (C·L ≤ 400, the
// cycle model's compile-time limit). Bit-exact against the model: `make fpga-verilate`.
// The repeated logic is module instances of one parameter set each: C(C−1)/2 gbnn_pair (a
// cluster pair's weights, support and partial counts) and C gbnn_cluster (a cluster's update and
// WTA), so that synthesis can map each once and multiply (synth.py's hierarchical mode); this
// module keeps the registers but W, the probe decoding and the controller.
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
  // order (pair (a, b) is number a(2C − a − 1)/2 + b − a − 1), each L×L, row la, column lb —
  // bit la·L + lb of that pair's gbnn_pair. A macro, not a function: Yosys evaluates each
  // constant function call by interpreting a copy of its body (see the manual).
  `define EDGE_AT(a, b, la, lb) (((((a) * (2 * C - (a) - 1)) / 2 + ((b) - (a) - 1)) * L + (la)) * L + (lb))

  // ---- registers (Circuit's fields; W is in the gbnn_pair instances) ----
  logic [E-1:0]        w_q;                // the pairs' flip-flops, read out
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

  // The message being stored, decoded (the pairs AND two of these per edge).
  logic [N-1:0] msg_hot;
  always_comb begin
    for (int c = 0; c < C; c++)
      for (int l = 0; l < L; l++) msg_hot[c*L+l] = sym[c*SYMW +: SYMW] == SYMW'(l);
  end

  // Load: known clusters one-hot; erased all on (sum-of-max, bail-out-early) or off.
  logic [N-1:0] init_v;
  always_comb begin
    for (int c = 0; c < C; c++)
      init_v[c*L +: L] = erased[c] ? {L{rule_q == SOM || rule_q == BOE}} : onehot[c*L +: L];
  end

  // The update's check set: all clusters (sum-of-max, bail-out-early), the known ones (joint's
  // first pass), the erased ones (later joint updates); joint freezes known clusters.
  logic [C-1:0] check;
  logic         first_pass, freeze_known;
  always_comb begin
    first_pass = rule_q == JOINT && t_q == 0;
    freeze_known = rule_q == JOINT;
    check = rule_q != JOINT ? '1 : first_pass ? ~erased : erased;
  end

  // ---- datapaths: one gbnn_pair per cluster pair, one gbnn_cluster per cluster ----
  // Cluster a's inputs from the other clusters, numbered k = b (b < a) or b − 1 (b > a):
  // sup_in[(a*(C-1) + k)*L +: L] and cnt_in[(a*(C-1) + k)*L*CW +: L*CW]. Pair (a, b) writes
  // k = b − 1 of cluster a and k = a of cluster b. Every connection is an L-bit slice.
  localparam int CW = $clog2(L + 1);
  logic [C*(C-1)*L-1:0]    sup_in;
  logic [C*(C-1)*L*CW-1:0] cnt_in;
  logic [N*SW-1:0]         score_d;
  logic [N-1:0]            som_next, wta_next;
  for (genvar a = 0; a < C; a++) begin : g_row
    for (genvar b = a + 1; b < C; b++) begin : g_pair
      gbnn_pair #(.L(L), .SUM_OF_SUM(SUM_OF_SUM)) pair (
          .clk, .rst, .store,
          .hot_a(msg_hot[a*L +: L]), .hot_b(msg_hot[b*L +: L]),
          .v_a(v_q[a*L +: L]), .v_b(v_q[b*L +: L]),
          .w(w_q[`EDGE_AT(a, b, 0, 0) +: L*L]),
          .sup_a(sup_in[(a*(C-1) + b - 1)*L +: L]), .sup_b(sup_in[(b*(C-1) + a)*L +: L]),
          .cnt_a(cnt_in[(a*(C-1) + b - 1)*L*CW +: L*CW]), .cnt_b(cnt_in[(b*(C-1) + a)*L*CW +: L*CW]));
    end
    logic [C-2:0] check_other;
    for (genvar k = 0; k < C - 1; k++) begin : g_check
      assign check_other[k] = check[k < a ? k : k + 1];
    end
    gbnn_cluster #(.C(C), .L(L), .SUM_OF_SUM(SUM_OF_SUM)) cluster (
        .sup(sup_in[a*(C-1)*L +: (C-1)*L]), .cnt(cnt_in[a*(C-1)*L*CW +: (C-1)*L*CW]),
        .check(check_other), .v(v_q[a*L +: L]), .first_pass, .hold(freeze_known && !erased[a]),
        .gamma(gamma_q), .score_q(score_q[a*L*SW +: L*SW]),
        .som_next(som_next[a*L +: L]), .score_d(score_d[a*L*SW +: L*SW]), .wta_next(wta_next[a*L +: L]));
  end

  // Without sum-of-sum the clusters' scores and WTA outputs are zero, but a synthesis that keeps
  // the hierarchy cannot see that across the instance boundary: the uses below test SUM_OF_SUM
  // themselves, so the score and γ registers are constant within this module and removed here.

  // ---- controller: Schedule::next_update after an update, as Circuit::next_phase ----
  logic [31:0] limit;
  assign limit = rule_q == SOS ? max_iter_q : 32'(LIMIT);
  logic [N-1:0] upd_next;
  logic         same;                          // the "changed" comparator, inverted
  logic [31:0]  t_next;
  logic [2:0]   iterate, after_load, after_update;
  always_comb begin
    upd_next = SUM_OF_SUM && phase_q == SELECT ? wta_next : som_next;
    same = upd_next == v_q;
    t_next = t_q + 32'd1;
    iterate = rule_q == SOS ? SCORE : UPDATE;
    after_load = limit == 0 ? UNLOAD : iterate;
    after_update = (same || t_next >= limit) ? UNLOAD : iterate;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      v_q <= '0; out_q <= '0; rule_q <= JOINT; gamma_q <= GW'(SUM_OF_SUM); max_iter_q <= 32'd20;
      phase_q <= IDLE; t_q <= '0; conv_q <= 1'b0;
      score_q <= '0;
      probe_q <= '0;
    end else if (store) begin
      // W: the pairs OR the message's clique in; nothing else changes
    end else if (start && RULES[rule]) begin
      probe_q <= sym;
      rule_q <= rule;
      gamma_q <= !SUM_OF_SUM ? '0 : gamma > 32'(GMAX) ? GW'(GMAX) : GW'(gamma);
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
          score_q <= SUM_OF_SUM ? score_d : '0;
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
