// charybdis-ctl: the client of real nodes and a local cluster manager
// (see docs/node.md). Its commands and their flags are in ctl_help.cc,
// which `charybdis-ctl --help` and `charybdis-ctl COMMAND --help` print.

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "core/cql/lexer.h"
#include "core/repair/repair_summary.h"
#include "node/ctl/ctl_calibrate.h"
#include "node/ctl/ctl_bench.h"
#include "node/ctl/ctl_help.h"
#include "node/ctl/status_table.h"
#include "node/ctl/topology_operation.h"
#include "node/local/local_cluster.h"
#include "node/local/process.h"
#include "node/server/mutex_mode.h"
#include "node/ctl/scenario_runner.h"
#include "node/server/transport.h"

namespace charybdis::node {
namespace {

struct Arguments {
  std::vector<std::string> words;                // positional
  std::map<std::string, std::string> flags;      // --name=value, --name value, -n value
  std::vector<std::pair<std::string, std::string>> conditions;  // --if COLUMN=VALUE
};

// Flags that take no value.
bool IsSwitch(const std::string& name) {
  return name == "if-not-exists" || name == "if-exists" || name == "json" || name == "keep" ||
         name == "ports" || name == "power" || name == "trace" || name == "help" || name == "h" ||
         name == "primary-range" || name == "auth" || name == "tls";
}

Arguments Parse(int argc, char** argv) {
  Arguments parsed;
  for (int i = 1; i < argc; i++) {
    std::string word = argv[i];
    if (word.rfind("-", 0) != 0 || word == "-") {
      parsed.words.push_back(word);
      continue;
    }
    std::string name = word.substr(word.rfind("--", 0) == 0 ? 2 : 1);
    std::string value;
    const size_t equals = name.find('=');
    if (equals != std::string::npos) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
    } else if (!IsSwitch(name) && i + 1 < argc) {
      value = argv[++i];
    }
    if (name == "if") {
      const size_t at = value.find('=');
      parsed.conditions.emplace_back(value.substr(0, at), at == std::string::npos ? "" : value.substr(at + 1));
      continue;
    }
    parsed.flags[name] = value;
  }
  return parsed;
}

int Usage(const std::string& problem) {
  std::cerr << "charybdis-ctl: " << problem << "\n(charybdis-ctl --help lists the commands; docs/node.md)\n";
  return 2;
}

std::string ClusterDirectory(const Arguments& arguments) {
  if (arguments.flags.count("dir")) return arguments.flags.at("dir");
  const char* environment = std::getenv("CHARYBDIS_CLUSTER_DIR");
  return environment != nullptr ? environment : "/tmp/charybdis-cluster";
}

std::optional<ConsistencyLevel> LevelNamed(const std::string& name) {
  ConsistencyLevel level;
  if (!ConsistencyLevel_Parse("CL_" + name, &level) || level == CL_UNSET) return std::nullopt;
  return level;
}

std::string Json(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  return text;
}

// One answer, readably: the outcome, then one line per row.
std::string Describe(const ClientResponse& response, bool cas) {
  std::string text = ClientResponse::Code_Name(response.code());
  if (response.code() == ClientResponse::OK && cas) {
    text = response.applied() ? "applied" : "not applied";
  }
  if (!response.message().empty()) absl::StrAppend(&text, ": ", response.message());
  if (response.code() == ClientResponse::UNAVAILABLE) {
    absl::StrAppend(&text, " (alive ", response.alive(), ", needed ", response.blocked_for(), ")");
  } else if (response.code() != ClientResponse::OK && response.code() != ClientResponse::INVALID_REQUEST) {
    absl::StrAppend(&text, " (received ", response.received(), " of ", response.blocked_for(), ")");
  }
  if (response.round_trips() > 0) absl::StrAppend(&text, " [", response.round_trips(), " round trips]");
  absl::StrAppend(&text, "\n");
  for (const ResultRow& row : response.rows()) {
    if (!row.clustering_key().empty()) absl::StrAppend(&text, "[", row.clustering_key(), "] ");
    for (const ResultCell& cell : row.cells()) absl::StrAppend(&text, cell.column(), "=", cell.value(), " ");
    absl::StrAppend(&text, "\n");
  }
  if (response.code() == ClientResponse::OK && response.rows_size() == 0 && !cas &&
      response.write_timestamp() == 0) {
    absl::StrAppend(&text, "(no row)\n");
  }
  return text;
}

// How ctl reaches the nodes' gRPC API: TLS with --ca, else a local
// cluster's own CA (DIR/ca.pem); as --user with the password in
// --password-file, else as a local cluster's superuser (DIR/superuser.txt).
absl::StatusOr<ClientAccess> AccessOf(const Arguments& arguments) {
  ClientAccess access;
  const std::string directory = ClusterDirectory(arguments);
  if (arguments.flags.count("ca")) {
    access.ca_pem = ReadFile(arguments.flags.at("ca"));
    if (access.ca_pem.find("BEGIN CERTIFICATE") == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("--ca: ", arguments.flags.at("ca"), " holds no PEM certificate"));
    }
  } else if (std::filesystem::exists(directory + "/ca.pem")) {
    access.ca_pem = ReadFile(directory + "/ca.pem");
  }
  if (arguments.flags.count("user")) {
    access.role = arguments.flags.at("user");
    if (!arguments.flags.count("password-file")) {
      return absl::InvalidArgumentError("--user needs --password-file FILE (the password on its first line)");
    }
    std::istringstream file(ReadFile(arguments.flags.at("password-file")));
    std::getline(file, access.password);
    if (access.password.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--password-file: ", arguments.flags.at("password-file"), " holds no password"));
    }
  } else if (std::filesystem::exists(directory + "/superuser.txt")) {
    std::istringstream superuser(ReadFile(directory + "/superuser.txt"));
    superuser >> access.role >> access.password;
  }
  return access;
}

// Where single requests go: --address, or node --node (default 1) of the
// local cluster.
absl::StatusOr<std::string> TargetAddress(const Arguments& arguments) {
  if (arguments.flags.count("address")) return arguments.flags.at("address");
  uint32_t node = 1;
  if (arguments.flags.count("node") && !absl::SimpleAtoi(arguments.flags.at("node"), &node)) {
    return absl::InvalidArgumentError("--node takes a node number");
  }
  auto cluster = LocalCluster::Open(ClusterDirectory(arguments), NodeBinaryBesideSelf());
  if (!cluster.ok()) return cluster.status();
  if (node < 1 || node > cluster->nodes().size()) {
    return absl::InvalidArgumentError(absl::StrCat("the cluster has no node ", node));
  }
  return cluster->client_address(node);
}


// The request a put, delete, get, serial-get or cas command means, or the
// usage problem.
absl::StatusOr<ClientRequest> BuildRequest(const Arguments& arguments, const std::string& command) {
  const auto& words = arguments.words;
  if (words.size() < 3) return absl::InvalidArgumentError(absl::StrCat(command, " needs TABLE KEY"));
  const std::string& table = words[1];
  const std::string& key = words[2];
  auto level = LevelNamed(arguments.flags.count("cl") ? arguments.flags.at("cl") : "QUORUM");
  if (!level) return absl::InvalidArgumentError("--cl: not a consistency level (ONE, QUORUM, ALL, LOCAL_QUORUM, ...)");
  auto serial = LevelNamed(arguments.flags.count("serial") ? arguments.flags.at("serial") : "SERIAL");
  if (!serial) return absl::InvalidArgumentError("--serial: SERIAL or LOCAL_SERIAL");
  std::vector<ColumnValue> puts;
  for (size_t i = 3; i < words.size(); i++) {
    const size_t at = words[i].find('=');
    if (at == std::string::npos) return absl::InvalidArgumentError(absl::StrCat("\"", words[i], "\" is not COLUMN=VALUE"));
    ColumnValue put;
    put.set_column(words[i].substr(0, at));
    put.set_value(words[i].substr(at + 1));
    puts.push_back(put);
  }
  ClientRequest request;
  request.set_request_id(1);
  request.set_trace(arguments.flags.count("trace") > 0);
  if (command == "put" || command == "delete") {
    if (command == "put" && puts.empty()) return absl::InvalidArgumentError("put needs COLUMN=VALUE");
    WriteOp* write = request.mutable_write();
    write->set_table(table);
    write->set_partition_key(key);
    write->set_consistency(*level);
    for (const ColumnValue& put : puts) *write->add_put() = put;
    write->set_delete_row(command == "delete");
  } else if (command == "get" || command == "serial-get") {
    ReadOp* read = request.mutable_read();
    read->set_table(table);
    read->set_partition_key(key);
    read->set_consistency(command == "get" ? *level : *serial);
  } else {  // cas
    if (puts.empty()) return absl::InvalidArgumentError("cas needs COLUMN=VALUE");
    CasOp* cas = request.mutable_cas();
    cas->set_serial_consistency(*serial);
    cas->set_commit_consistency(*level);
    CasStatement* statement = cas->add_statement();
    WriteOp* write = statement->mutable_write();
    write->set_table(table);
    write->set_partition_key(key);
    for (const ColumnValue& put : puts) *write->add_put() = put;
    statement->set_if_not_exists(arguments.flags.count("if-not-exists") > 0);
    statement->set_if_exists(arguments.flags.count("if-exists") > 0);
    for (const auto& [column, value] : arguments.conditions) {
      Condition* condition = statement->add_condition();
      condition->set_column(column);
      condition->set_op(Condition::EQ);
      condition->set_value(value);
    }
  }
  return request;
}

// A traced request's timeline: one line per step, in microseconds since the
// coordinator received it (every node of a local cluster shares a clock).
std::string Timeline(const ClientResponse& response) {
  std::vector<TraceEvent> steps(response.trace().begin(), response.trace().end());
  std::stable_sort(steps.begin(), steps.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.at_us() < b.at_us(); });
  std::string text = absl::StrCat("trace (", steps.size(), " steps):\n");
  const int64_t start = steps.empty() ? 0 : steps.front().at_us();
  for (const TraceEvent& step : steps) {
    // Answers go to the client's pseudo-address.
    const std::string what = absl::StrReplaceAll(step.what(), {{absl::StrCat(kClientEndpoint, "/0"), "client"}});
    absl::StrAppend(&text, absl::StrFormat("  %+8d us  node %u shard %u  %s\n", step.at_us() - start,
                                           step.node(), step.shard(), what));
  }
  return text;
}

int Request(const Arguments& arguments, const std::string& command) {
  absl::StatusOr<ClientRequest> request = BuildRequest(arguments, command);
  if (!request.ok()) return Usage(std::string(request.status().message()));
  ExecuteRequest execute;
  *execute.mutable_request() = std::move(*request);
  auto address = TargetAddress(arguments);
  if (!address.ok()) return Usage(std::string(address.status().message()));
  ClientResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  const grpc::Status status = ConnectClient(*address)->Execute(&context, execute, &response);
  if (!status.ok()) {
    std::cerr << "charybdis-ctl: " << *address << ": " << status.error_message() << "\n";
    return 1;
  }
  if (arguments.flags.count("json")) {
    std::cout << Json(response) << "\n";
  } else {
    std::cout << Describe(response, command == "cas");
    if (execute.request().trace()) std::cout << Timeline(response);
  }
  return response.code() == ClientResponse::OK ? 0 : 1;
}

enum class View { kStatus, kRing, kMetrics };

int Status(const Arguments& arguments, View view) {
  const bool metrics = view == View::kMetrics;
  // Every node of the local cluster, unless one address is given.
  std::vector<std::string> addresses;
  if (arguments.flags.count("address") || arguments.flags.count("node")) {
    auto address = TargetAddress(arguments);
    if (!address.ok()) return Usage(std::string(address.status().message()));
    addresses.push_back(*address);
  } else {
    auto cluster = LocalCluster::Open(ClusterDirectory(arguments), NodeBinaryBesideSelf());
    if (!cluster.ok()) return Usage(std::string(cluster.status().message()));
    for (NodeId id : cluster->nodes()) addresses.push_back(cluster->client_address(id));
  }
  int failures = 0;
  std::vector<StatusAnswer> answers;
  for (const std::string& address : addresses) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::Status status;
    if (metrics) {
      MetricsResponse response;
      status = ConnectClient(address)->Metrics(&context, MetricsRequest(), &response);
      if (status.ok()) std::cout << response.text();
      if (!status.ok()) std::cout << address << ": down (" << status.error_message() << ")\n";
    } else {
      StatusResponse response;
      status = ConnectClient(address)->Status(&context, StatusRequest(), &response);
      answers.push_back({address, status.ok() ? std::optional<StatusResponse>(response) : std::nullopt,
                         status.error_message()});
    }
    failures += !status.ok();
  }
  if (view == View::kStatus) std::cout << StatusTable(answers);
  if (view == View::kRing) std::cout << RingTable(answers);
  return failures == 0 ? 0 : 1;
}

// ctl decommission N, ctl removenode N [--driver M]: begins the operation
// at its driver and watches it to the end (node/ctl/topology_operation.h).
int Operation(const Arguments& arguments, topology::Operation operation) {
  const std::string command = operation == topology::Operation::kRemove ? "removenode" : "decommission";
  OperationRequest request;
  request.operation = operation;
  if (arguments.words.size() != 2 || !absl::SimpleAtoi(arguments.words[1], &request.node) || request.node == 0) {
    return Usage(absl::StrCat(command, " takes one node number"));
  }
  uint32_t seconds = 600;
  if (arguments.flags.count("timeout") && (!absl::SimpleAtoi(arguments.flags.at("timeout"), &seconds) || seconds == 0)) {
    return Usage("--timeout takes a positive number of seconds");
  }
  request.timeout = std::chrono::seconds(seconds);
  request.driver = request.node;
  if (operation == topology::Operation::kRemove) {
    request.driver = 0;
    if (arguments.flags.count("driver") && !absl::SimpleAtoi(arguments.flags.at("driver"), &request.driver)) {
      return Usage("--driver takes a node number");
    }
    if (request.driver == request.node) return Usage("a removed node is dead: another node drives its removal");
  }
  if (arguments.flags.count("address")) {
    if (request.driver == 0) return Usage("removenode --address A needs --driver M, the node at A");
    request.driver_address = arguments.flags.at("address");
  } else {
    auto cluster = LocalCluster::Open(ClusterDirectory(arguments), NodeBinaryBesideSelf());
    if (!cluster.ok()) return Usage(std::string(cluster.status().message()));
    if (request.driver == 0) request.driver = request.node == 1 ? 2 : 1;
    const auto& nodes = cluster->nodes();
    for (NodeId id : {request.node, request.driver}) {
      if (std::find(nodes.begin(), nodes.end(), id) == nodes.end()) {
        return Usage(absl::StrCat("the cluster has no node ", id));
      }
    }
    request.driver_address = cluster->client_address(request.driver);
    request.other_addresses = OtherClientAddresses(*cluster, request);
  }
  const absl::Status done = RunOperation(request, [](const std::string& line) { std::cout << line << std::endl; });
  if (!done.ok()) {
    std::cerr << "charybdis-ctl: " << done.message() << "\n";
    return 1;
  }
  std::cout << command << " of node " << request.node << " done" << std::endl;
  return 0;
}

int Calibrate(const Arguments& arguments) {
  uint32_t count = 300;
  if (arguments.flags.count("count") && (!absl::SimpleAtoi(arguments.flags.at("count"), &count) || count == 0)) {
    return Usage("--count takes a positive number");
  }
  auto address = TargetAddress(arguments);
  if (!address.ok()) return Usage(std::string(address.status().message()));
  absl::StatusOr<MeasuredProfile> measured = MeasureProfile(*address, count);
  if (!measured.ok()) {
    std::cerr << "charybdis-ctl: calibrate: " << measured.status().message() << "\n";
    return 1;
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(measured->profile, &text);
  const std::string profile =
      absl::StrCat("# This machine's latencies, measured by `charybdis-ctl calibrate` on ", *address, " from ",
                   measured->summary, ".\n# Use: ./charybdis sim --scenario=FILE --profile=THIS_FILE\n", text);
  std::cout << profile;
  if (arguments.flags.count("out")) {
    std::ofstream out(arguments.flags.at("out"));
    out << profile;
    if (!out) {
      std::cerr << "charybdis-ctl: cannot write " << arguments.flags.at("out") << "\n";
      return 1;
    }
  }
  return 0;
}

int Bench(const Arguments& arguments) {
  BenchOptions options;
  if (arguments.words.size() < 2) return Usage("bench needs put, get, cas or contend");
  options.operation = arguments.words[1];
  if (options.operation != "put" && options.operation != "get" && options.operation != "cas" &&
      options.operation != "contend") {
    return Usage("bench needs put, get, cas or contend");
  }
  if (arguments.flags.count("count") && !absl::SimpleAtoi(arguments.flags.at("count"), &options.count)) {
    return Usage("--count takes a number");
  }
  if (arguments.flags.count("cl")) {
    auto level = LevelNamed(arguments.flags.at("cl"));
    if (!level) return Usage("--cl: not a consistency level");
    options.level = *level;
  }
  if (arguments.flags.count("in-flight") &&
      (!absl::SimpleAtoi(arguments.flags.at("in-flight"), &options.in_flight) || options.in_flight == 0 ||
       options.in_flight > 1024)) {
    return Usage("--in-flight takes a number from 1 to 1024");
  }
  if (arguments.flags.count("prefix")) options.key_prefix = arguments.flags.at("prefix");
  if (arguments.flags.count("table")) options.table = arguments.flags.at("table");
  auto address = TargetAddress(arguments);
  if (!address.ok()) return Usage(std::string(address.status().message()));
  auto stub = ConnectClient(*address);
  StatusResponse status;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  if (!stub->Status(&context, StatusRequest(), &status).ok()) {
    std::cerr << "charybdis-ctl: " << *address << " does not answer\n";
    return 1;
  }
  options.shards = status.shards();
  return RunBench(*address, options) == 0 ? 0 : 1;
}

int RunScenarioCommand(const Arguments& arguments) {
  if (arguments.words.size() != 2) return Usage("run-scenario needs one scenario file");
  RunScenarioOptions options;
  options.scenario_path = arguments.words[1];
  options.directory = arguments.flags.count("dir") ? arguments.flags.at("dir")
                                                   : ClusterDirectory(arguments) + "-scenario";
  options.keep = arguments.flags.count("keep") > 0;
  options.node_binary =
      arguments.flags.count("node-binary") ? arguments.flags.at("node-binary") : NodeBinaryBesideSelf();
  // Bazel puts the simulator in ../sim beside node/.
  options.checker_binary = arguments.flags.count("checker")
                               ? arguments.flags.at("checker")
                               : (std::filesystem::path(NodeBinaryBesideSelf()).parent_path().parent_path() /
                                  "sim" / "charybdis_sim")
                                     .string();
  if (arguments.flags.count("seed") && !absl::SimpleAtoi(arguments.flags.at("seed"), &options.seed)) {
    return Usage("--seed takes a number");
  }
  if (arguments.flags.count("n") && !absl::SimpleAtoi(arguments.flags.at("n"), &options.nodes)) {
    return Usage("-n takes a number");
  }
  return RunScenario(options);
}

// `cluster up`: writes the configs and starts every node; the exit status.
int ClusterUp(const Arguments& arguments, const std::string& directory, const std::string& binary) {
  auto number = [&](const std::string& text, uint32_t& out) { return absl::SimpleAtoi(text, &out); };
  LocalCluster::Options options;
  if (arguments.flags.count("n") && !number(arguments.flags.at("n"), options.nodes)) return Usage("-n takes a number");
  if (arguments.flags.count("smp") && !number(arguments.flags.at("smp"), options.shards)) return Usage("--smp takes a number");
  options.replication_factor = std::min<uint32_t>(3, options.nodes);
  options.own_addresses = !arguments.flags.count("ports");
  options.auth = arguments.flags.count("auth") > 0;
  options.tls = arguments.flags.count("tls") > 0;
  if (arguments.flags.count("rf") && !number(arguments.flags.at("rf"), options.replication_factor)) return Usage("--rf takes a number");
  if (arguments.flags.count("cql-schema")) {
    const std::string path = arguments.flags.at("cql-schema");
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    if (!file) return Usage(absl::StrCat("--cql-schema: cannot read ", path));
    absl::StatusOr<std::vector<std::string>> statements = cql::SplitStatements(text.str());
    if (!statements.ok()) return Usage(absl::StrCat(path, ": ", statements.status().message()));
    options.cql_schema = std::move(*statements);
  }
  auto cluster = LocalCluster::Create(directory, binary, options);
  if (!cluster.ok()) return Usage(std::string(cluster.status().message()));
  std::cout << "starting " << options.nodes << " nodes with " << options.shards << " shards in "
            << directory << "\n";
  if (options.own_addresses && absl::StartsWith(cluster->cql_address(1), "127.0.0.1:")) {
    std::cout << "no loopback block had the standard ports free (or 127.0.x.y cannot be bound here):"
              << " each node takes ports of its own on 127.0.0.1\n";
  }
  if (const absl::Status started = cluster->StartAll(); !started.ok()) {
    std::cerr << "charybdis-ctl: " << started.message() << "\n";
    return 1;
  }
  for (NodeId id : cluster->nodes()) {
    std::cout << "node " << id << ": client " << cluster->client_address(id) << ", cql "
              << cluster->cql_address(id) << ", metrics http://"
              << cluster->metrics_address(id) << "/metrics, log " << cluster->log_path(id) << "\n";
  }
  if (options.auth) {
    std::cout << "CQL asks for a password: the superuser's name and password are in " << cluster->superuser_path()
              << "\n";
  }
  if (options.tls) {
    std::cout << "TLS on: clients check the nodes' certificates against " << directory << "/ca.pem\n";
  }
  return 0;
}

// `cluster add`, and `replace N` (`replaces` N): a new node joins the
// local cluster, or takes dead N's place; the exit status.
int AddNode(const Arguments& arguments, LocalCluster& cluster, NodeId replaces) {
  uint32_t seconds = 600;
  if (arguments.flags.count("timeout") && (!absl::SimpleAtoi(arguments.flags.at("timeout"), &seconds) || seconds == 0)) {
    return Usage("--timeout takes a positive number of seconds");
  }
  const std::string rack = arguments.flags.count("rack") ? arguments.flags.at("rack") : "";
  if (replaces != 0 && !rack.empty()) return Usage("a replacement stands on the rack of the node it replaces: no --rack");
  const absl::StatusOr<NodeId> id = cluster.AddNode(rack, replaces);
  if (!id.ok()) {
    std::cerr << "charybdis-ctl: " << (replaces != 0 ? "replace" : "cluster add") << ": " << id.status().message()
              << "\n";
    return 1;
  }
  std::cout << "node " << *id << ": client " << cluster.client_address(*id) << ", cql " << cluster.cql_address(*id)
            << ", log " << cluster.log_path(*id)
            << (replaces != 0 ? absl::StrCat("; it replaces node ", replaces) : std::string("; it joins")) << std::endl;
  absl::Status done = cluster.Start(*id);
  if (done.ok()) {
    done = WatchJoin(*id, cluster.client_address(*id), std::chrono::seconds(seconds),
                     [](const std::string& line) { std::cout << line << std::endl; });
  }
  if (!done.ok()) {
    std::cerr << "charybdis-ctl: " << done.message() << "\n";
    return 1;
  }
  std::cout << "node " << *id << " joined" << std::endl;
  return 0;
}

// `replace N`: a new node takes dead N's place in the local cluster.
int Replace(const Arguments& arguments) {
  NodeId dead = 0;
  if (arguments.words.size() != 2 || !absl::SimpleAtoi(arguments.words[1], &dead) || dead == 0) {
    return Usage("replace takes one node number");
  }
  auto cluster = LocalCluster::Open(ClusterDirectory(arguments), NodeBinaryBesideSelf());
  if (!cluster.ok()) return Usage(std::string(cluster.status().message()));
  return AddNode(arguments, *cluster, dead);
}

// ctl rollback N: undoes the operation in progress on node N.
int RollBackCommand(const Arguments& arguments) {
  NodeId node = 0;
  if (arguments.words.size() != 2 || !absl::SimpleAtoi(arguments.words[1], &node) || node == 0) {
    return Usage("rollback takes one node number: the node whose operation is undone");
  }
  std::string address;
  if (arguments.flags.count("address")) {
    address = arguments.flags.at("address");
  } else {
    // Through another node by default: the node of a join may be dead.
    auto cluster = LocalCluster::Open(ClusterDirectory(arguments), NodeBinaryBesideSelf());
    if (!cluster.ok()) return Usage(std::string(cluster.status().message()));
    NodeId through = node == 1 ? 2 : 1;
    if (arguments.flags.count("node") && !absl::SimpleAtoi(arguments.flags.at("node"), &through)) {
      return Usage("--node takes a node number");
    }
    const auto& nodes = cluster->nodes();
    if (std::find(nodes.begin(), nodes.end(), through) == nodes.end()) {
      return Usage(absl::StrCat("the cluster has no node ", through));
    }
    address = cluster->client_address(through);
  }
  const absl::StatusOr<uint64_t> version = RollBack(node, address);
  if (!version.ok()) {
    std::cerr << "charybdis-ctl: the operation on node " << node << " was not rolled back: " << version.status().message()
              << "\n";
    return 1;
  }
  std::cout << "the operation on node " << node << " was rolled back: topology version " << *version << std::endl;
  return 0;
}

// ctl cleanup N...: each node in turn removes the data of the ranges it
// no longer replicates (core/topology/node_cleanup.h).
int Cleanup(const Arguments& arguments) {
  uint32_t seconds = 600;
  if (arguments.flags.count("timeout") && (!absl::SimpleAtoi(arguments.flags.at("timeout"), &seconds) || seconds == 0)) {
    return Usage("--timeout takes a positive number of seconds");
  }
  std::vector<std::pair<std::string, std::string>> targets;  // (name, client address)
  if (arguments.flags.count("address")) {
    if (arguments.words.size() != 1) return Usage("cleanup --address A takes no node numbers");
    targets.emplace_back(arguments.flags.at("address"), arguments.flags.at("address"));
  } else {
    if (arguments.words.size() < 2) return Usage("cleanup takes the node numbers to clean up");
    auto cluster = LocalCluster::Open(ClusterDirectory(arguments), NodeBinaryBesideSelf());
    if (!cluster.ok()) return Usage(std::string(cluster.status().message()));
    for (size_t i = 1; i < arguments.words.size(); i++) {
      NodeId node = 0;
      const auto& nodes = cluster->nodes();
      if (!absl::SimpleAtoi(arguments.words[i], &node) || std::find(nodes.begin(), nodes.end(), node) == nodes.end()) {
        return Usage(absl::StrCat("the cluster has no node ", arguments.words[i]));
      }
      targets.emplace_back(absl::StrCat("node ", node), cluster->client_address(node));
    }
  }
  int failures = 0;
  for (const auto& [name, address] : targets) {
    std::cout << name << ": cleaning up..." << std::endl;
    const absl::StatusOr<CleanedUp> cleaned = CleanUp(address, std::chrono::seconds(seconds));
    if (!cleaned.ok()) {
      std::cerr << "charybdis-ctl: " << name << ": " << cleaned.status().message() << "\n";
      failures++;
      continue;
    }
    std::cout << name << ": removed " << cleaned->pairs << " stored pairs (" << cleaned->bytes
              << " bytes) of ranges it no longer replicates" << std::endl;
  }
  return failures == 0 ? 0 : 1;
}

// The repair `ctl repair [KEYSPACE [TABLE]] [--range START:END]
// [--primary-range] [--dc NAME]` asks for.
absl::StatusOr<RepairOp> RepairRequestOf(const Arguments& arguments) {
  RepairOp request;
  if (arguments.words.size() > 3) return absl::InvalidArgumentError("repair takes at most a keyspace and a table");
  if (arguments.words.size() > 1) request.set_keyspace(arguments.words[1]);
  if (arguments.words.size() > 2) request.set_table(arguments.words[2]);
  request.set_primary_range(arguments.flags.count("primary-range") > 0);
  if (arguments.flags.count("dc")) request.set_datacenter(arguments.flags.at("dc"));
  if (arguments.flags.count("range")) {
    const std::string& range = arguments.flags.at("range");
    const size_t colon = range.find(':', 1);
    int64_t start = 0, end = 0;
    if (colon == std::string::npos || !absl::SimpleAtoi(range.substr(0, colon), &start) ||
        !absl::SimpleAtoi(range.substr(colon + 1), &end) || start >= end) {
      return absl::InvalidArgumentError("--range takes START:END, tokens with START < END: the range (START, END]");
    }
    request.set_has_range(true);
    request.set_start_token(start);
    request.set_end_token(end);
  }
  return request;
}

void PrintRepaired(const std::string& name, const RepairSummary& summary, double seconds) {
  std::cout << absl::StreamFormat(
                   "%s: %d table ranges in agreement; %d rows compared, %d differed: %d versions fetched (%d bytes), "
                   "%d sent to replicas lacking them (%d bytes); %d unfinished Paxos rounds finished; %.1f s",
                   name, summary.ranges(), summary.rows_compared(), summary.rows_differing(),
                   summary.rows_fetched(), summary.bytes_fetched(), summary.rows_sent(), summary.bytes_sent(),
                   summary.paxos_rounds_finished(), seconds)
            << std::endl;
}

// The nodes a repair or a compaction runs on: the one at --address, node
// --node N of the local cluster, or every node of it; (name, address).
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> TargetsOf(const Arguments& arguments) {
  std::vector<std::pair<std::string, std::string>> targets;
  if (arguments.flags.count("address")) {
    targets.emplace_back(arguments.flags.at("address"), arguments.flags.at("address"));
    return targets;
  }
  auto cluster = LocalCluster::Open(ClusterDirectory(arguments), NodeBinaryBesideSelf());
  if (!cluster.ok()) return cluster.status();
  std::vector<NodeId> nodes = cluster->nodes();
  if (arguments.flags.count("node")) {
    NodeId node = 0;
    if (!absl::SimpleAtoi(arguments.flags.at("node"), &node) ||
        std::find(nodes.begin(), nodes.end(), node) == nodes.end()) {
      return absl::InvalidArgumentError(absl::StrCat("the cluster has no node ", arguments.flags.at("node")));
    }
    nodes = {node};
  }
  for (NodeId node : nodes) targets.emplace_back(absl::StrCat("node ", node), cluster->client_address(node));
  return targets;
}

// ctl compact [KEYSPACE [TABLE]]: each node in turn purges what its
// tables' tombstone GC allows (core/repair/shard_compaction.h).
int CompactCommand(const Arguments& arguments) {
  if (arguments.words.size() > 3) return Usage("compact takes at most a keyspace and a table");
  CompactOp request;
  if (arguments.words.size() > 1) request.set_keyspace(arguments.words[1]);
  if (arguments.words.size() > 2) request.set_table(arguments.words[2]);
  const absl::StatusOr<std::vector<std::pair<std::string, std::string>>> targets = TargetsOf(arguments);
  if (!targets.ok()) return Usage(std::string(targets.status().message()));
  int failures = 0;
  for (const auto& [name, address] : *targets) {
    std::cout << name << ": compacting..." << std::endl;
    const absl::StatusOr<CleanedUp> compacted = Compact(address, request, std::chrono::seconds(3600));
    if (!compacted.ok()) {
      std::cerr << "charybdis-ctl: " << name << ": " << compacted.status().message() << "\n";
      failures++;
      continue;
    }
    std::cout << name << ": deleted " << compacted->pairs << " stored pairs (" << compacted->bytes
              << " bytes): obsolete versions, the deletions tombstone GC lets go, and "
              << compacted->paxos_states << " repaired Paxos states" << std::endl;
  }
  return failures == 0 ? 0 : 1;
}

// ctl repair: the node at --address, node --node N of the local cluster,
// or every node of it in turn, each its primary ranges (each range once).
int RepairCommand(const Arguments& arguments) {
  absl::StatusOr<RepairOp> request = RepairRequestOf(arguments);
  if (!request.ok()) return Usage(std::string(request.status().message()));
  uint32_t seconds = 3600;
  if (arguments.flags.count("timeout") && (!absl::SimpleAtoi(arguments.flags.at("timeout"), &seconds) || seconds == 0)) {
    return Usage("--timeout takes a positive number of seconds");
  }
  if (!arguments.flags.count("address") && !arguments.flags.count("node")) {
    if (!request->datacenter().empty()) {
      return Usage("--dc repairs among one datacenter's replicas from one of its nodes: give --node N");
    }
    request->set_primary_range(true);  // every node: each range once
  }
  const absl::StatusOr<std::vector<std::pair<std::string, std::string>>> found = TargetsOf(arguments);
  if (!found.ok()) return Usage(std::string(found.status().message()));
  const std::vector<std::pair<std::string, std::string>>& targets = *found;
  RepairSummary total;
  int failures = 0;
  const auto began = std::chrono::steady_clock::now();
  for (const auto& [name, address] : targets) {
    std::cout << name << ": repairing" << (request->primary_range() ? " its primary ranges" : "") << "..."
              << std::endl;
    const auto started = std::chrono::steady_clock::now();
    const absl::StatusOr<RepairSummary> repaired = Repair(address, *request, std::chrono::seconds(seconds));
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    if (!repaired.ok()) {
      std::cerr << "charybdis-ctl: " << name << ": " << repaired.status().message() << "\n";
      failures++;
      continue;
    }
    repair::AddRepairSummary(total, *repaired);
    PrintRepaired(name, *repaired, took.count());
  }
  if (targets.size() > 1) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - began;
    PrintRepaired(absl::StrCat("all ", targets.size() - failures, " nodes repaired"), total, took.count());
  }
  return failures == 0 ? 0 : 1;
}

int Cluster(const Arguments& arguments) {
  const auto& words = arguments.words;
  if (words.size() < 2) return Usage("cluster needs up, add, down, kill, start, stop, partition or heal");
  const std::string& action = words[1];
  const std::string directory = ClusterDirectory(arguments);
  const std::string binary =
      arguments.flags.count("node-binary") ? arguments.flags.at("node-binary") : NodeBinaryBesideSelf();
  auto number = [&](const std::string& text, uint32_t& out) { return absl::SimpleAtoi(text, &out); };
  if (action == "up") return ClusterUp(arguments, directory, binary);
  absl::Status result;
  auto cluster = LocalCluster::Open(directory, binary);
  if (!cluster.ok()) return Usage(std::string(cluster.status().message()));
  uint32_t node = 0;
  const bool needs_node = action == "kill" || action == "start" || action == "stop" || action == "partition";
  if (needs_node && (words.size() < 3 || !number(words[2], node))) return Usage(absl::StrCat("cluster ", action, " needs a node number"));
  if (action == "add") return AddNode(arguments, *cluster, 0);
  if (action == "down") {
    result = cluster->StopAll();
    std::error_code error;
    std::filesystem::remove_all(directory, error);
  } else if (action == "kill") {
    const bool power = arguments.flags.count("power") > 0;
    const absl::StatusOr<DroppedData> killed = cluster->Kill(node, power);
    result = killed.status();
    if (killed.ok() && power) {
      std::cout << "node " << node << " lost power: " << killed->bytes_dropped
                << " bytes it had not fsync'd dropped from " << killed->files_cut << " files\n";
    }
  } else if (action == "start") {
    result = cluster->Start(node);
    if (result.ok()) result = cluster->WaitForViews(30000);
  } else if (action == "stop") {
    result = cluster->Stop(node);
  } else if (action == "partition") {
    uint32_t from = 0;
    if (!arguments.flags.count("from") || !number(arguments.flags.at("from"), from)) return Usage("cluster partition N --from M");
    result = cluster->Partition(node, from);
  } else if (action == "heal") {
    result = cluster->Heal();
  } else {
    return Usage(absl::StrCat("unknown cluster action \"", action, "\""));
  }
  if (!result.ok()) {
    std::cerr << "charybdis-ctl: " << result.message() << "\n";
    return 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  SkipMutexDeadlockDetection();
  const Arguments arguments = Parse(argc, argv);
  const bool help = arguments.flags.count("help") > 0 || arguments.flags.count("h") > 0;
  if (arguments.words.empty()) {
    std::cout << CtlOverview();
    return help ? 0 : 2;
  }
  const std::string& command = arguments.words[0];
  absl::StatusOr<ClientAccess> access = AccessOf(arguments);
  if (!access.ok()) return Usage(std::string(access.status().message()));
  UseClientAccess(*std::move(access));
  if (help) {
    const std::optional<std::string> text = CtlCommandHelp(command);
    if (!text) return Usage(absl::StrCat("unknown command \"", command, "\""));
    std::cout << *text;
    return 0;
  }
  if (command == "put" || command == "get" || command == "delete" || command == "cas" ||
      command == "serial-get") {
    return Request(arguments, command);
  }
  if (command == "status") return Status(arguments, View::kStatus);
  if (command == "ring") return Status(arguments, View::kRing);
  if (command == "metrics") return Status(arguments, View::kMetrics);
  if (command == "cluster") return Cluster(arguments);
  if (command == "decommission") return Operation(arguments, topology::Operation::kDecommission);
  if (command == "removenode") return Operation(arguments, topology::Operation::kRemove);
  if (command == "replace") return Replace(arguments);
  if (command == "cleanup") return Cleanup(arguments);
  if (command == "repair") return RepairCommand(arguments);
  if (command == "compact") return CompactCommand(arguments);
  if (command == "rollback") return RollBackCommand(arguments);
  if (command == "bench") return Bench(arguments);
  if (command == "calibrate") return Calibrate(arguments);
  if (command == "run-scenario") return RunScenarioCommand(arguments);
  return Usage(absl::StrCat("unknown command \"", command, "\""));
}

}  // namespace
}  // namespace charybdis::node

int main(int argc, char** argv) { return charybdis::node::Main(argc, argv); }
