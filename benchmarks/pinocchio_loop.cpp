// Pinocchio in C++ on any model, per state over N random states: crba and nonLinearEffects, and for each
// frame named on the command line computeJointJacobians + getFrameJacobian (LOCAL_WORLD_ALIGNED) and
// forwardKinematics(q, v, 0) + getFrameClassicalAcceleration. Built and run by benchmarks/pinocchio_cpp.py
// (for bench_hyq.py and bench_robots.py):
//   pinocchio_loop MODEL.bin N [FRAME...] -> "crba nle" (and " jacobians biases" with frames), microseconds
//   per state: each loop runs over chunks of CHUNK states, 5 rounds, and keeps its fastest chunk (on a shared
//   machine a long loop is always interrupted; mechsym's batched calls are timed over as many states).
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

enum { CHUNK = 1000 };

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pinocchio_loop MODEL.bin N [FRAME...]\n");
    return 2;
  }
  pinocchio::Model model;
  model.loadFromBinary(argv[1]);
  pinocchio::Data data(model);
  const int n = std::atoi(argv[2]);
  std::vector<Eigen::VectorXd> qs(n), vs(n);
  for (int i = 0; i < n; i++) {
    qs[i] = pinocchio::randomConfiguration(model, -Eigen::VectorXd::Ones(model.nq), Eigen::VectorXd::Ones(model.nq));
    vs[i] = Eigen::VectorXd::Random(model.nv);
  }
  std::vector<pinocchio::FrameIndex> ids;
  for (int f = 3; f < argc; f++) ids.push_back(model.getFrameId(argv[f]));
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
  pinocchio::Data::Matrix6x J(6, model.nv);
  double sink = 0, best[4] = {1e9, 1e9, 1e9, 1e9};
  const int chunk = n < CHUNK ? n : CHUNK;
  for (int rep = 0; rep < 5; rep++)
  for (int start = 0; start + chunk <= n; start += chunk) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = start; i < start + chunk; i++) { pinocchio::crba(model, data, qs[i]); sink += data.M(0, 0); }
    auto t1 = std::chrono::steady_clock::now();
    for (int i = start; i < start + chunk; i++) { pinocchio::nonLinearEffects(model, data, qs[i], vs[i]); sink += data.nle(0); }
    auto t2 = std::chrono::steady_clock::now();
    for (int i = start; i < start + chunk && !ids.empty(); i++) {
      pinocchio::computeJointJacobians(model, data, qs[i]);
      pinocchio::updateFramePlacements(model, data);
      for (const auto id : ids) {
        J.setZero();
        pinocchio::getFrameJacobian(model, data, id, pinocchio::LOCAL_WORLD_ALIGNED, J);
        sink += J(0, 0);
      }
    }
    auto t3 = std::chrono::steady_clock::now();
    for (int i = start; i < start + chunk && !ids.empty(); i++) {
      pinocchio::forwardKinematics(model, data, qs[i], vs[i], zero);
      for (const auto id : ids)
        sink += pinocchio::getFrameClassicalAcceleration(model, data, id, pinocchio::LOCAL_WORLD_ALIGNED).linear()(0);
    }
    auto t4 = std::chrono::steady_clock::now();
    const double d[4] = {std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(),
                         std::chrono::duration<double>(t3 - t2).count(), std::chrono::duration<double>(t4 - t3).count()};
    for (int k = 0; k < 4; k++) if (d[k] < best[k]) best[k] = d[k];
  }
  if (ids.empty())
    std::printf("%.4f %.4f\n", best[0] / chunk * 1e6, best[1] / chunk * 1e6);
  else
    std::printf("%.4f %.4f %.4f %.4f\n", best[0] / chunk * 1e6, best[1] / chunk * 1e6, best[2] / chunk * 1e6,
                best[3] / chunk * 1e6);
  std::fprintf(stderr, "%g\n", sink);
  return 0;
}
