// Drives the Verilated gbnn_uart (the board top) through its UART line, bit by bit, with the
// stored messages and probes of a vector file of the cycle model (fpga-model/examples/
// rtl_vectors.rs), and checks every byte it sends back against the model: the acks, and per
// probe the output register, iteration count and converged flag the model had at Done.
// Also: a reset ('Z'), an unknown command ('?'), a byte with a framing error (dropped), stores
// streamed back to back. Exit 0: every byte matched; 1: a mismatch; 2: bad arguments or file.
//
// usage: tb_uart VECTOR_FILE CLKS_PER_BIT PROBES_PER_RULE [som]
// (`som`: the build has SUM_OF_SUM = 0; a sum-of-sum probe must be answered '!'.)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "Vgbnn_uart.h"
#include "verilated.h"

struct Probe {
    std::string rule_name, line;
    unsigned rule = 0;
    uint32_t gamma = 0, max_iter = 0;
    std::vector<unsigned> sym;
    std::string out_hex;  // the output register at Done, most significant digit first
    uint32_t iterations = 0;
    unsigned converged = 0;
};

// The host's end of the line: a transmitter queue of line levels (one per clock) and a receiver
// that samples the FPGA's tx at each bit's middle.
struct Host {
    Vgbnn_uart top;
    int cpb;
    long clocks = 0;
    std::deque<uint8_t> line;   // levels to put on rx, one per clock
    std::vector<uint8_t> got;   // bytes received from tx
    int rx_bit = -1, rx_cnt = 0;
    unsigned rx_sh = 0;
    bool framing_error = false;

    explicit Host(int cpb) : cpb(cpb) { top.rx = 1; }

    void send(uint8_t b, bool stop_bit = true) {
        unsigned frame = (unsigned(stop_bit) << 9) | (unsigned(b) << 1);  // start 0, data, stop
        for (int k = 0; k < 10; ++k) line.insert(line.end(), cpb, (frame >> k) & 1);
    }
    void clock() {
        top.rx = line.empty() ? 1 : line.front();
        if (!line.empty()) line.pop_front();
        top.clk = 0;
        top.eval();
        top.clk = 1;
        top.eval();
        clocks++;
        // Receiver: a low line while idle is a start bit; sample half a bit on, then every bit.
        if (rx_bit < 0) {
            if (!top.tx) rx_bit = 0, rx_cnt = cpb / 2;
        } else if (--rx_cnt <= 0) {
            rx_cnt = cpb;
            if (rx_bit == 0 && top.tx) rx_bit = -1;  // not a start bit after all
            else if (rx_bit >= 1 && rx_bit <= 8) rx_sh |= unsigned(top.tx) << (rx_bit - 1);
            if (rx_bit == 9) {
                if (!top.tx) framing_error = true;
                got.push_back(uint8_t(rx_sh));
                rx_sh = 0;
                rx_bit = -1;
            } else if (rx_bit >= 0) rx_bit++;
        }
    }
    // Runs until `n` bytes have come back (true) or `limit` clocks passed (false).
    bool until(size_t n, long limit) {
        for (long k = 0; k < limit && got.size() < n; ++k) clock();
        return got.size() >= n && !framing_error;
    }
};

static std::string hex(const std::vector<uint8_t>& b) {
    std::string s;
    char t[4];
    for (uint8_t x : b) std::snprintf(t, sizeof t, "%02x ", x), s += t;
    return s;
}

static int fail(const char* what, const std::vector<uint8_t>& want, const std::vector<uint8_t>& got, long clocks) {
    std::printf("FAIL %s at clock %ld\n  expected %s\n  got      %s\n", what, clocks, hex(want).c_str(),
                hex(got).c_str());
    return 1;
}

int main(int argc, char** argv) {
    const bool som = argc == 5 && std::string(argv[4]) == "som";
    if ((argc != 4 && !som) || std::atoi(argv[2]) < 4 || std::atol(argv[3]) < 1) {
        std::fprintf(stderr, "usage: %s VECTOR_FILE CLKS_PER_BIT(>=4) PROBES_PER_RULE(>=1) [som]\n", argv[0]);
        return 2;
    }
    const int cpb = std::atoi(argv[2]);
    const long per_rule = std::atol(argv[3]);
    std::ifstream in(argv[1]);
    std::string line;
    int C = 0, L = 0, SYMW = 0, SW = 0;
    if (!in || !std::getline(in, line) || std::sscanf(line.c_str(), "size %d %d %d %d", &C, &L, &SYMW, &SW) != 4) {
        std::fprintf(stderr, "%s: not a vector file (no size line)\n", argv[1]);
        return 2;
    }
    const int N = C * L, NB = (N + 7) / 8;
    // The vectors: stores in order, and per probe the registers at its first Done clock.
    std::vector<std::vector<unsigned>> stores;
    std::vector<Probe> probes;
    std::string out_last;
    bool waiting = false;
    while (std::getline(in, line)) {
        std::istringstream s(line);
        std::string cmd;
        s >> cmd;
        if (cmd == "R" || cmd == "W") continue;
        std::vector<unsigned> sym(C);
        if (cmd == "S") {
            for (auto& x : sym) s >> x;
            stores.push_back(sym);
            std::string edges;
            s >> edges;
        } else if (cmd == "P") {
            Probe p;
            s >> p.rule >> p.gamma >> p.max_iter;
            for (auto& x : sym) s >> x;
            p.sym = sym;
            p.line = line.substr(0, line.find('|'));
            probes.push_back(p);
            waiting = true;
        }
        std::string bar, state, out;
        unsigned phase = 0, conv = 0;
        uint64_t iters = 0;
        s >> bar >> phase >> iters >> conv >> state >> out;
        if (bar != "|" || out.empty()) {
            std::fprintf(stderr, "%s: malformed line: %s\n", argv[1], line.c_str());
            return 2;
        }
        if (out != "=") out_last = out;
        if (waiting && phase == 6) {
            probes.back().out_hex = out_last;
            probes.back().iterations = uint32_t(iters);
            probes.back().converged = conv;
            waiting = false;
        }
    }
    Verilated::commandArgs(argc, argv);
    Host h(cpb);
    const long frame = 10L * cpb;
    for (int k = 0; k < 40; ++k) h.clock();  // the power-on reset
    // A reset, an unknown byte, a dropped byte (stop bit low: no answer), a reset again.
    h.send('Z');
    if (!h.until(1, 4 * frame) || h.got[0] != 'z') return fail("reset ack", {'z'}, h.got, h.clocks);
    h.send(0x00);
    if (!h.until(2, 4 * frame) || h.got[1] != '?') return fail("unknown command", {'z', '?'}, h.got, h.clocks);
    h.send('Z', false);
    if (h.until(3, 4 * frame)) return fail("a framing error must drop the byte", {'z', '?'}, h.got, h.clocks);
    h.line.insert(h.line.end(), 2 * cpb, 1);  // the line idles high again
    h.send('Z');
    if (!h.until(3, 6 * frame) || h.got[2] != 'z') return fail("reset ack", {'z', '?', 'z'}, h.got, h.clocks);
    // A build without sum-of-sum refuses a sum-of-sum probe and stays ready.
    if (som) {
        h.got.clear();
        for (uint8_t b : {uint8_t('P'), uint8_t(0), uint8_t(1), uint8_t(0), uint8_t(0), uint8_t(0), uint8_t(20),
                          uint8_t(0), uint8_t(0), uint8_t(0)})
            h.send(b);
        for (int c = 0; c < C; ++c) h.send(0);
        if (!h.until(1, (10 + C + 4) * frame) || h.got[0] != '!') return fail("sum-of-sum refused", {'!'}, h.got, h.clocks);
    }
    // Stores streamed back to back: each ack ('s') leaves while the next frame comes in.
    h.got.clear();
    for (auto& m : stores) {
        h.send('S');
        for (unsigned x : m) h.send(x >= unsigned(L) ? 0xff : uint8_t(x));
    }
    std::vector<uint8_t> acks(stores.size(), 's');
    if (!h.until(stores.size(), (long(stores.size()) * (C + 1) + 4) * frame) || h.got != acks)
        return fail("store acks", acks, h.got, h.clocks);
    // Probes, each answered before the next is sent.
    long sent = 0, seen[4] = {0, 0, 0, 0};
    for (const Probe& p : probes) {
        if (seen[p.rule & 3]++ >= per_rule) continue;
        h.got.clear();
        h.send('P');
        h.send(uint8_t(p.rule));
        for (int k = 0; k < 4; ++k) h.send(uint8_t(p.gamma >> (8 * k)));
        for (int k = 0; k < 4; ++k) h.send(uint8_t(p.max_iter >> (8 * k)));
        for (unsigned x : p.sym) h.send(x >= unsigned(L) ? 0xff : uint8_t(x));
        std::vector<uint8_t> want(1 + NB + 4 + 1, 0);
        want[0] = 'p';
        for (int i = 0; i < N; ++i) {
            size_t d = p.out_hex.size() - 1 - size_t(i / 4);  // hex digit of bit i
            char ch = p.out_hex[d];
            unsigned x = ch <= '9' ? ch - '0' : ch - 'a' + 10;
            if ((x >> (i % 4)) & 1) want[1 + i / 8] |= 1 << (i % 8);
        }
        for (int k = 0; k < 4; ++k) want[1 + NB + k] = uint8_t(p.iterations >> (8 * k));
        want[1 + NB + 4] = uint8_t(p.converged);
        // The frame in, the circuit (a few dozen clocks at most here), the reply out.
        long limit = (1 + 9 + C + long(want.size()) + 4) * frame + 100000;
        if (!h.until(want.size(), limit) || h.got != want) {
            std::printf("  probe %ld: %s\n", sent, p.line.c_str());
            return fail("probe reply", want, h.got, h.clocks);
        }
        sent++;
    }
    h.got.clear();
    h.until(1, 4 * frame);  // nothing more may come back
    if (!h.got.empty()) return fail("no further bytes", {}, h.got, h.clocks);
    std::printf("ok %dx%d UART: %zu stores, %ld probes (every rule in the file), %ld clocks at %d clocks per bit\n", C, L,
                stores.size(), sent, h.clocks, cpb);
    return 0;
}
