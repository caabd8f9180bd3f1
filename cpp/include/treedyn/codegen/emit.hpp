// A recorded tape (codegen/traced.hpp) written out as straight-line C++: one statement per live
// operation, constants as exact hexadecimal literals, the guards accumulated in a mask. The body
// is a template over the value type T, so that the same statements run on one robot (T = double
// or float) or on several robots at once, one per lane of a vector register (T = a GCC vector
// type): per lane, the arithmetic is the scalar's, operation for operation.
#pragma once
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "treedyn/codegen/traced.hpp"

namespace treedyn {

// operation counts of the emitted code: multiplications, additions (and subtractions),
// divisions, square roots, sines and cosines, guards
struct EmittedCounts {
  long m = 0, a = 0, d = 0, sqrt = 0, trig = 0, guards = 0;
};

// the literal of a constant: hexadecimal (exact), with an f suffix for float
inline std::string emit_literal(double c, bool single) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", c);
  std::string s = buf;
  if (single) s += "f";
  return c < 0 ? "(" + s + ")" : s;
}

// The generated code: functions seg0, seg1, ... of about `segment` statements each (one long
// function would take the compiler minutes on a 100-joint model: its time grows faster than the
// length), called in order by body(). A value used in a later segment than its own is kept in
// the scratch array w (sized `*scratch` values). Inputs are named by `input_name` (an input index
// → an expression such as "q[3]"), read where used; outputs are assigned to out_names[k].
template <class InputName>
std::string emit_segments(const Tape& tape, const std::vector<int>& outputs, const std::vector<std::string>& out_names,
                          bool single, InputName input_name, int segment, EmittedCounts& counts, int* scratch) {
  const int n = int(tape.nodes.size());
  auto is_stmt = [&](int k) {
    const TraceOp op = tape.nodes[std::size_t(k)].op;
    return op != TraceOp::Const && op != TraceOp::Input;
  };
  std::vector<char> live(std::size_t(n), 0), guard(std::size_t(n), 0);
  std::vector<int> expected(std::size_t(n), 1), stack(outputs);
  for (const auto& g : tape.guards) {
    stack.push_back(g.node);
    guard[std::size_t(g.node)] = 1;
    expected[std::size_t(g.node)] = g.expected;
  }
  while (!stack.empty()) {  // mark what the outputs and guards depend on
    const int k = stack.back();
    stack.pop_back();
    if (k < 0 || live[std::size_t(k)]) continue;
    live[std::size_t(k)] = 1;
    stack.push_back(tape.nodes[std::size_t(k)].a);
    stack.push_back(tape.nodes[std::size_t(k)].b);
  }
  // segments in tape order; the last segment using each statement's value
  std::vector<int> seg(std::size_t(n), -1), last_use(std::size_t(n), -1);
  int count = 0, nseg = 0;
  for (int k = 0; k < n; ++k) {
    if (!live[std::size_t(k)] || !is_stmt(k)) continue;
    seg[std::size_t(k)] = count++ / segment;
    nseg = seg[std::size_t(k)] + 1;
    for (int o : {tape.nodes[std::size_t(k)].a, tape.nodes[std::size_t(k)].b})
      if (o >= 0) last_use[std::size_t(o)] = std::max(last_use[std::size_t(o)], seg[std::size_t(k)]);
  }
  nseg = std::max(nseg, 1);
  std::vector<std::vector<int>> outs_of(static_cast<std::size_t>(n));  // outputs assigned where their value is made
  std::vector<int> late_outputs;                                       // outputs that are constants or inputs
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    if (is_stmt(outputs[j])) {
      outs_of[std::size_t(outputs[j])].push_back(int(j));
      last_use[std::size_t(outputs[j])] = std::max(last_use[std::size_t(outputs[j])], seg[std::size_t(outputs[j])]);
    } else {
      late_outputs.push_back(int(j));
    }
  }
  std::vector<int> slot(std::size_t(n), -1);
  int nslots = 0;
  for (int k = 0; k < n; ++k)
    if (seg[std::size_t(k)] >= 0 && last_use[std::size_t(k)] > seg[std::size_t(k)]) slot[std::size_t(k)] = nslots++;
  *scratch = nslots;

  const char* head = "template <class T, class M>\nstatic __attribute__((noinline)) void seg";
  const char* args =
      "(const T* __restrict q, const T* __restrict qd, const T* __restrict tau, T* __restrict qdd, "
      "T* __restrict w, M& ok) {\n";
  std::string s;
  s.reserve(std::size_t(n) * 40);
  std::vector<int> loaded(std::size_t(n), -1);  // the segment that has read w[slot] into a local
  int current = -1;
  auto ref = [&](int k) -> std::string {
    const TraceNode& x = tape.nodes[std::size_t(k)];
    if (x.op == TraceOp::Const) return emit_literal(x.c, single);
    if (x.op == TraceOp::Input) return "(" + input_name(int(x.c)) + ")";
    const std::string name = "t" + std::to_string(k);
    if (seg[std::size_t(k)] != current && loaded[std::size_t(k)] != current) {
      s += "  const T " + name + " = w[" + std::to_string(slot[std::size_t(k)]) + "];\n";
      loaded[std::size_t(k)] = current;
    }
    return name;
  };
  for (int k = 0; k < n; ++k) {
    if (seg[std::size_t(k)] < 0) continue;
    if (seg[std::size_t(k)] != current) {
      if (current >= 0) s += "}\n";
      current = seg[std::size_t(k)];
      s += head + std::to_string(current) + args;
    }
    const TraceNode& x = tape.nodes[std::size_t(k)];
    const std::string name = "t" + std::to_string(k);
    if (guard[std::size_t(k)]) {  // ok &= (the comparison as it was when traced)
      const std::string a = ref(x.a), b = ref(x.b);
      const char* op = x.op == TraceOp::Less ? " < " : " <= ";
      const char* flipped = x.op == TraceOp::Less ? " <= " : " < ";  // ¬(a < b) as b <= a: false for NaN
      s +=
          expected[std::size_t(k)] ? "  ok = ok & (" + a + op + b + ");\n" : "  ok = ok & (" + b + flipped + a + ");\n";
      ++counts.guards;
      continue;
    }
    std::string e;
    switch (x.op) {
      case TraceOp::Add:
        e = ref(x.a) + " + " + ref(x.b), ++counts.a;
        break;
      case TraceOp::Sub:
        e = ref(x.a) + " - " + ref(x.b), ++counts.a;
        break;
      case TraceOp::Mul:
        e = ref(x.a) + " * " + ref(x.b), ++counts.m;
        break;
      case TraceOp::Div:
        e = ref(x.a) + " / " + ref(x.b), ++counts.d;
        break;
      case TraceOp::Neg:
        e = "-" + ref(x.a);
        break;
      case TraceOp::Sqrt:
        e = "td_sqrt(" + ref(x.a) + ")", ++counts.sqrt;
        break;
      case TraceOp::Sin:
        e = "td_sin(" + ref(x.a) + ")", ++counts.trig;
        break;
      case TraceOp::Cos:
        e = "td_cos(" + ref(x.a) + ")", ++counts.trig;
        break;
      case TraceOp::Abs:
        e = "td_abs(" + ref(x.a) + ")";
        break;
      default:
        break;
    }
    s += "  const T " + name + " = " + e + ";\n";
    if (slot[std::size_t(k)] >= 0) s += "  w[" + std::to_string(slot[std::size_t(k)]) + "] = " + name + ";\n";
    for (int j : outs_of[std::size_t(k)]) s += "  " + out_names[std::size_t(j)] + " = " + name + ";\n";
  }
  if (current < 0) s += head + std::string("0") + args;  // nothing but constants and inputs
  for (int j : late_outputs) s += "  " + out_names[std::size_t(j)] + " = " + ref(outputs[std::size_t(j)]) + ";\n";
  s += "}\n\ntemplate <class T, class M>\ninline void body(const T* q, const T* qd, const T* tau, T* qdd, T* w, M& ok) "
       "{\n";
  for (int g = 0; g < nseg; ++g) s += "  seg" + std::to_string(g) + "<T, M>(q, qd, tau, qdd, w, ok);\n";
  return s + "}\n";
}

}  // namespace treedyn
