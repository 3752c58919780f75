#include "spillway/drill/instance_farm.hpp"

namespace spillway::drill {

InstanceFarm::InstanceFarm(sim::Scenario sc, FarmOptions opt, QObject* parent)
    : QObject(parent), sc_(std::move(sc)), opt_(opt), clock_(opt.speed) {}

InstanceFarm::~InstanceFarm() = default;

bool InstanceFarm::start() {
  const std::uint64_t seed = opt_.seed ? opt_.seed : sc_.seed;
  std::size_t i = 0;
  clock_.restart();
  for (const sim::ModelSpec& m : sc_.models) {
    for (const sim::InstanceSpec& is : m.instances) {
      FakeInstance::Config cfg;
      cfg.name = is.name;
      cfg.model = &m;
      cfg.faults = FaultTimeline(sc_, is.name, m.name);
      cfg.seed = seed;
      cfg.limits = opt_.limits;
      auto* inst = new FakeInstance(std::move(cfg), &clock_, this);
      connect(inst, &FakeInstance::faultTransition, this, &InstanceFarm::faultTransition);
      const int port = opt_.basePort ? opt_.basePort + static_cast<int>(i) : 0;
      if (port > 65535 || !inst->start(static_cast<quint16>(port))) {
        error_ = QString("%1: cannot listen on 127.0.0.1:%2: %3")
                     .arg(QString::fromStdString(is.name))
                     .arg(port)
                     .arg(port > 65535 ? QStringLiteral("port out of range") : inst->errorString());
        return false;
      }
      instances_.push_back(inst);
      ++i;
    }
  }
  return true;
}

}  // namespace spillway::drill
