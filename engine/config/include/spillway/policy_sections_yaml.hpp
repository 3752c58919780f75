#pragma once
// Reading and writing the policy's `models`, `degrade` and `limits` sections (docs/policy.md).
#include "spillway/yaml_reader.hpp"

namespace spillway {

void readModelProfiles(const YamlReader& r, const YAML::Node& n,
                       std::map<std::string, ModelProfile>& out);
void readDegrade(const YamlReader& r, const YAML::Node& n,
                 const std::map<std::string, ModelProfile>& models, DegradeConfig& d);
void readLimits(const YamlReader& r, const YAML::Node& n, LimitsConfig& l);
void readSlaClasses(const YamlReader& r, const YAML::Node& n,
                    const std::map<std::string, ModelProfile>& models,
                    std::map<std::string, SlaClass>& out);
void emitPolicySections(YAML::Emitter& e, const Policy& p);

}  // namespace spillway
