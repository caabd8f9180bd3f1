// The broad phase of collision: sweep and prune (Baraff 1992, sec. 6; the "sort and sweep" of Cohen, Lin, Manocha
// and Ponamgi's I-COLLIDE, 1995) over the candidate pairs' geoms.
//
// Each finite geom's box is its world axis-aligned bounding box: its own frame's box (the shape's half extents: a
// capsule's r, r, h + r) turned into world axes, |R| e, grown by its margin (a pair of the geoms' rule touches within
// the sum of the two margins). Two shapes within their margins have overlapping boxes, so the pairs swept hold
// every pair that can touch; the sphere test (ContactEngine::near) and the narrow phase then decide as a loop
// over every pair does. The boxes are sorted by their lower ends along the axis on which the centres spread most, an
// insertion sort from the last step's order (nearly sorted from step to step: O(n) then); the sweep pairs each box with
// the boxes that start before it ends, keeps those that overlap on the other two axes too, and looks the pair up among
// the model's candidates (a geom's partners sorted: a binary search). A pair with a plane (an unbounded geom) keeps
// its geom's box when the box reaches the plane's half-space, within the plane's margin: n · (p − p₀) − |n| · h ≤ m
// (|n| · h: the box's reach along −n). A pair with a margin of its own above its geoms' two (which the boxes hold)
// is tested every step; MuJoCo's rule, the larger of the two, is swept. The pairs come out in
// the model's order (sorted: the narrow phase, its contacts and their warm-start keys are those of a loop over every
// pair).
//
// On the DeepMind Control dog (126 collision geoms, 6 273 candidate pairs, 5 planes: ~600 plane pairs) the loop over
// every pair took about a sixth of a step; on the Gymnasium models (13-126 pairs, most with the floor) the sweep has
// little to do.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

namespace treedyn {

struct SweepAndPrune {
  std::vector<int> geom;                // the swept geoms
  std::vector<Eigen::Vector3d> extent;  // their half extents in their own frames, + margin and 1e-9 (relative and
                                        // absolute: the ends' rounding, positions within 1e6 m)
  std::vector<int> adr;                 // swept geom s's partners t > s: partner[adr[s] .. adr[s + 1]), sorted, and
  std::vector<int> partner;             // the index of their pair in the model's list (pair)
  std::vector<int> pair;
  std::vector<int> always;  // the pairs tested every step (a pair's own margin beyond the boxes'; two planes)
  // the pairs of a plane and a finite geom: the plane, its margin, the geom's slot, the pair
  std::vector<int> plane, plane_slot, plane_pair;
  std::vector<double> plane_margin;
  int n_pairs = 0;

  // pairs (the model's candidates, by geom), half (each geom's half extents in its frame, ∞: a plane), margin (each
  // geom's), own_margin[k]: pair k has a margin of its own beyond its geoms' sum (empty: none has)
  void build(const std::vector<std::pair<int, int>>& pairs, const std::vector<Eigen::Vector3d>& half,
             const std::vector<double>& margin, const std::vector<char>& own_margin) {
    geom.clear(), extent.clear(), always.clear();
    plane.clear(), plane_slot.clear(), plane_pair.clear(), plane_margin.clear();
    n_pairs = int(pairs.size());
    std::vector<int> slot(half.size(), -1);
    auto slot_of = [&](int g) {
      if (slot[g] < 0)
        slot[g] = int(geom.size()), geom.push_back(g),
        extent.push_back((half[g].array() + margin[g]) * (1 + 1e-9) + 1e-9);
      return slot[g];
    };
    std::vector<std::pair<std::pair<int, int>, int>> swept;  // ((s, t), k), s < t
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const auto [a, b] = pairs[k];
      const bool fa = half[a].allFinite(), fb = half[b].allFinite();
      if ((!own_margin.empty() && own_margin[k]) || (!fa && !fb)) {
        always.push_back(int(k));
      } else if (!fa || !fb) {
        const int p = fa ? b : a;
        plane.push_back(p), plane_margin.push_back(margin[p]), plane_slot.push_back(slot_of(fa ? a : b));
        plane_pair.push_back(int(k));
      } else {
        const int sa = slot_of(a), sb = slot_of(b);
        swept.push_back({{std::min(sa, sb), std::max(sa, sb)}, int(k)});
      }
    }
    std::sort(swept.begin(), swept.end());
    adr.assign(geom.size() + 1, 0), partner.clear(), pair.clear();
    for (const auto& [st, k] : swept) ++adr[st.first + 1], partner.push_back(st.second), pair.push_back(k);
    std::partial_sum(adr.begin(), adr.end(), adr.begin());
  }
};

struct SweepWorkspace {
  std::vector<int> order;             // the swept geoms sorted by their boxes' lower ends (the last step's first)
  std::vector<Eigen::Vector3d> half;  // this step's world half widths |R| e
  std::vector<double> lo;             // the lower ends on this step's axis
  std::vector<int> pairs;             // this step's pairs to test, ascending
};

// the pairs to test at the geoms' world poses (R, p: indexed by geom), into w.pairs in the model's order
inline void sweep_and_prune(const SweepAndPrune& S, const std::vector<Eigen::Matrix3d>& R,
                            const std::vector<Eigen::Vector3d>& p, SweepWorkspace& w) {
  const int n = int(S.geom.size());
  w.pairs.assign(S.always.begin(), S.always.end());
  w.half.resize(n);
  Eigen::Vector3d mean = Eigen::Vector3d::Zero(), square = Eigen::Vector3d::Zero();
  for (int s = 0; s < n; ++s) {
    const int g = S.geom[s];
    w.half[s].noalias() = R[g].cwiseAbs() * S.extent[s];
    mean += p[g], square += p[g].cwiseAbs2();
  }
  for (std::size_t i = 0; i < S.plane.size(); ++i) {  // a box within a plane's half-space (and margin)
    const int P = S.plane[i], s = S.plane_slot[i];
    const Eigen::Vector3d normal = R[P].col(2);
    if (normal.dot(p[S.geom[s]] - p[P]) - normal.cwiseAbs().dot(w.half[s]) <= S.plane_margin[i])
      w.pairs.push_back(S.plane_pair[i]);
  }
  if (n > 1) {
    int axis;  // the axis of the centres' largest spread
    (square - mean.cwiseAbs2() / n).maxCoeff(&axis);
    const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
    w.lo.resize(n);
    for (int s = 0; s < n; ++s) w.lo[s] = p[S.geom[s]][axis] - w.half[s][axis];
    if (int(w.order.size()) != n) w.order.resize(n), std::iota(w.order.begin(), w.order.end(), 0);
    for (int i = 1; i < n; ++i) {  // insertion sort by lo
      const int s = w.order[i];
      int j = i;
      for (; j > 0 && w.lo[w.order[j - 1]] > w.lo[s]; --j) w.order[j] = w.order[j - 1];
      w.order[j] = s;
    }
    for (int i = 0; i < n; ++i) {
      const int s = w.order[i];
      const double hi = w.lo[s] + 2 * w.half[s][axis];
      const Eigen::Vector3d& ps = p[S.geom[s]];
      for (int j = i + 1; j < n && w.lo[w.order[j]] <= hi; ++j) {
        const int t = w.order[j];
        const Eigen::Vector3d& pt = p[S.geom[t]];
        if (std::abs(ps[a1] - pt[a1]) > w.half[s][a1] + w.half[t][a1] ||
            std::abs(ps[a2] - pt[a2]) > w.half[s][a2] + w.half[t][a2])
          continue;
        const int u = std::min(s, t), v = std::max(s, t);
        const auto first = S.partner.begin() + S.adr[u], last = S.partner.begin() + S.adr[u + 1];
        for (auto it = std::lower_bound(first, last, v); it != last && *it == v; ++it)
          w.pairs.push_back(S.pair[it - S.partner.begin()]);
      }
    }
  }
  std::sort(w.pairs.begin(), w.pairs.end());  // (each pair found once: the model's order)
}

}  // namespace treedyn
