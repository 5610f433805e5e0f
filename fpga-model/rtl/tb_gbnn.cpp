// Replays a vector file of the cycle model (fpga-model/examples/rtl_vectors.rs) on the Verilated
// gbnn_circuit, one clock per line, and stops at the first register bit that differs, naming the
// size, rule, probe, clock, register and bit. Exit 0: every clock matched; 1: a mismatch; 2: bad
// arguments or vector file.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "Vgbnn_circuit.h"
#include "verilated.h"

using Bits = std::vector<uint32_t>;

// A Verilated port as 32-bit words, least significant first.
template <class T> Bits words(const T& x) {
    if constexpr (std::is_integral_v<T>) {
        uint64_t v = x;
        return {uint32_t(v), uint32_t(v >> 32)};
    } else {
        Bits b;
        for (size_t i = 0; i < sizeof(x) / sizeof(uint32_t); ++i) b.push_back(x[i]);
        return b;
    }
}

template <class T> void set_words(T& x, const Bits& b) {
    if constexpr (std::is_integral_v<T>) {
        x = T(uint64_t(b[0]) | (b.size() > 1 ? uint64_t(b[1]) << 32 : 0));
    } else {
        for (size_t i = 0; i < sizeof(x) / sizeof(uint32_t); ++i) x[i] = i < b.size() ? b[i] : 0;
    }
}

static bool bit(const Bits& b, size_t k) { return k / 32 < b.size() && (b[k / 32] >> (k % 32)) & 1; }

static Bits from_hex(const std::string& h) {
    Bits b((h.size() * 4 + 31) / 32 + 1, 0);
    for (size_t d = 0; d < h.size(); ++d) {
        char ch = h[h.size() - 1 - d];
        uint32_t x = ch <= '9' ? ch - '0' : ch - 'a' + 10;
        b[d * 4 / 32] |= x << (d * 4 % 32);
    }
    return b;
}

static std::string to_hex(const Bits& b, size_t nbits) {
    std::string s;
    for (size_t d = (nbits + 3) / 4; d-- > 0;) {
        int x = 0;
        for (int k = 0; k < 4; ++k) x |= bit(b, d * 4 + k) << k;
        s += "0123456789abcdef"[x];
    }
    return s;
}

static const char* RULES[] = {"sum-of-sum", "sum-of-max", "bail-out-early", "joint"};
static const char* PHASES[] = {"Idle", "Load", "Score", "Select", "Update", "Unload", "Done", "?"};

struct Where {
    std::string size, rule = "-", what = "reset";
    long probe = -1, clock = 0, line = 0;
    std::string probe_line;
};

static int fail(const Where& w, const std::string& reg, size_t b, const std::string& want, const std::string& got) {
    std::printf("FAIL %s rule %s probe %ld clock %ld (%s; vector line %ld)\n  %s\n", w.size.c_str(), w.rule.c_str(),
                w.probe, w.clock, w.what.c_str(), w.line, w.probe_line.c_str());
    std::printf("  register %s, first differing bit %zu\n  expected %s\n  got      %s\n", reg.c_str(), b, want.c_str(),
                got.c_str());
    return 1;
}

// Compares `nbits` bits of a register; returns the first differing bit or -1.
static long first_diff(const Bits& want, const Bits& got, size_t nbits) {
    for (size_t k = 0; k < nbits; ++k)
        if (bit(want, k) != bit(got, k)) return long(k);
    return -1;
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s VECTOR_FILE\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    std::string line;
    int C = 0, L = 0, SYMW = 0, SW = 0;
    if (!in || !std::getline(in, line) || std::sscanf(line.c_str(), "size %d %d %d %d", &C, &L, &SYMW, &SW) != 4) {
        std::fprintf(stderr, "%s: not a vector file (no size line)\n", argv[1]);
        return 2;
    }
    const int N = C * L;
    Verilated::commandArgs(argc, argv);
    Vgbnn_circuit top;
    // The build's parameters must be the file's: the state port is N bits wide.
    if (sizeof(top.state) * 8 < size_t(N) || sizeof(top.state) * 8 >= size_t(N) + 64) {
        std::fprintf(stderr, "%s: vectors for %dx%d, but this simulator was built for another size\n", argv[1], C, L);
        return 2;
    }
    Where w;
    w.size = std::to_string(C) + "x" + std::to_string(L);
    auto clock = [&] {
        top.clk = 0;
        top.eval();
        top.clk = 1;
        top.eval();
        w.clock++;
    };
    top.rst = 1;
    top.store = top.start = 0;
    clock();
    top.rst = 0;
    std::string last[3];
    long lines = 1, clocks = 0, probes = 0;
    while (std::getline(in, line)) {
        w.line = ++lines;
        std::istringstream s(line);
        std::string cmd;
        s >> cmd;
        if (cmd == "R") {
            long p;
            s >> w.rule >> p;
            w.probe = p;
            w.clock = 0;
            probes++;
            continue;
        }
        if (cmd == "W") {
            std::string h;
            s >> h;
            size_t e = size_t(C) * (C - 1) / 2 * L * L;
            long d = first_diff(from_hex(h), words(top.edges), e);
            if (d >= 0) return fail(w, "W (edges)", d, h.size() <= 200 ? h : "(long)", "");
            continue;
        }
        top.store = cmd == "S";
        top.start = cmd == "P";
        Bits sym(size_t(C * SYMW + 31) / 32 + 1, 0);
        long edges_set = -1;
        if (cmd == "P") {
            unsigned rule;
            uint64_t gamma, max_iter;
            s >> rule >> gamma >> max_iter;
            top.rule = rule;
            top.gamma = uint32_t(gamma);
            top.max_iter = uint32_t(max_iter);
            w.probe_line = line.substr(0, line.find('|'));
        }
        if (cmd == "S" || cmd == "P") {
            for (int c = 0; c < C; ++c) {
                unsigned x;
                s >> x;
                if (x == 65535) x = (1u << SYMW) - 1;  // ERASED: all ones
                for (int k = 0; k < SYMW; ++k)
                    if ((x >> k) & 1) sym[(c * SYMW + k) / 32] |= 1u << ((c * SYMW + k) % 32);
            }
            set_words(top.sym, sym);
        }
        if (cmd == "S") s >> edges_set;
        std::string bar;
        s >> bar;
        if (bar != "|") {
            std::fprintf(stderr, "%s:%ld: malformed line\n", argv[1], lines);
            return 2;
        }
        w.what = cmd == "S" ? "store" : cmd == "P" ? "start" : cmd == "Z" ? "reset" : "tick";
        if (cmd != "Z") clock();
        clocks++;
        unsigned phase, conv;
        uint64_t iters;
        std::string vec[3];
        s >> phase >> iters >> conv >> vec[0] >> vec[1] >> vec[2];
        for (int k = 0; k < 3; ++k)
            if (vec[k] != "=") last[k] = vec[k];
        if (top.phase != phase)
            return fail(w, "phase", 0, PHASES[phase & 7], PHASES[top.phase & 7]);
        if (top.iterations != iters)
            return fail(w, "iterations", 0, std::to_string(iters), std::to_string(top.iterations));
        if (top.converged != conv)
            return fail(w, "converged", 0, std::to_string(conv), std::to_string(top.converged));
        const char* names[3] = {"state", "out", "scores"};
        Bits got[3] = {words(top.state), words(top.out), words(top.scores)};
        size_t widths[3] = {size_t(N), size_t(N), size_t(N) * SW};
        for (int k = 0; k < 3; ++k) {
            long d = first_diff(from_hex(last[k]), got[k], widths[k]);
            if (d >= 0) return fail(w, names[k], d, last[k], to_hex(got[k], widths[k]));
        }
        if (edges_set >= 0) {
            Bits e = words(top.edges);
            long n = 0;
            for (uint32_t x : e) n += __builtin_popcount(x);
            if (n != edges_set)
                return fail(w, "W (edges set)", 0, std::to_string(edges_set), std::to_string(n));
        }
    }
    std::printf("ok %s: %ld clocks, %ld probes (every rule in the file) bit-exact\n", w.size.c_str(), clocks, probes);
    return 0;
}
