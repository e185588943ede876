#include "node/local/local_cluster.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_interceptor.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/env/assert.h"
#include "core/schema/bootstrap.h"
#include "node/server/power_loss_fs.h"
#include "node/local/certificates.h"
#include "node/local/process.h"
#include "node/server/client_metadata.h"
#include "google/protobuf/text_format.h"

namespace charybdis::node {

Table TableNamed(const std::string& name) {
  Table table;
  table.set_name(name);
  table.add_column("v");
  return table;
}

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Whether `pid` is still the node started with `config` (a pid file can
// outlive its process, and pids are reused).
bool IsNode(int pid, const std::string& config) {
  if (!Alive(pid)) return false;
  const std::string command_line = ReadFile(absl::StrCat("/proc/", pid, "/cmdline"));
  return command_line.find("--config=" + config) != std::string::npos;
}

constexpr size_t kPortsPerNode = std::size(LocalCluster::kStandardPorts);

// Each node's host, and its ports in kStandardPorts' order, node after node.
struct NodeAddresses {
  std::vector<std::string> hosts;
  std::vector<int> ports;
};

// A loopback address per node on the standard ports when asked and
// possible, else 127.0.0.1 and free ports of its own.
absl::StatusOr<NodeAddresses> PickAddresses(const LocalCluster::Options& options) {
  const std::vector<int> standard(std::begin(LocalCluster::kStandardPorts), std::end(LocalCluster::kStandardPorts));
  NodeAddresses addresses;
  const absl::StatusOr<int> block = options.own_addresses ? FreeLoopbackBlock(options.nodes, standard)
                                                          : absl::StatusOr<int>(absl::UnavailableError("not asked"));
  if (block.ok()) {
    for (NodeId id = 1; id <= options.nodes; id++) {
      addresses.hosts.push_back(absl::StrCat("127.0.", *block, ".", id));
      addresses.ports.insert(addresses.ports.end(), standard.begin(), standard.end());
    }
  } else {
    auto free = FreePorts(kPortsPerNode * options.nodes);
    if (!free.ok()) return free.status();
    addresses.hosts.assign(options.nodes, "127.0.0.1");
    addresses.ports = *std::move(free);
  }
  CHARYBDIS_ASSERT(addresses.hosts.size() == options.nodes);
  CHARYBDIS_ASSERT(addresses.ports.size() == kPortsPerNode * options.nodes);
  return addresses;
}

}  // namespace

std::string NodeBinaryBesideSelf() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return (self.parent_path() / "charybdis-node").string();
}

namespace {

// Writes `text` to `path`, which only its owner may read.
absl::Status WriteSecret(const std::string& path, const std::string& text) {
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  {
    // Created empty and closed to others before the secret goes in.
    std::ofstream(path, std::ios::trunc).flush();
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace, error);
    if (error) return absl::InternalError(absl::StrCat("cannot chmod 600 ", path, ": ", error.message()));
    std::ofstream file(path, std::ios::trunc);
    file << text;
    if (!file) return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

// A random password (32 hex digits from the system's random source), for
// the nodes (`password_path`: the password alone) and for people and
// tools (`user_path`: "name password").
absl::Status WriteSuperuserPassword(const std::string& password_path, const std::string& user_path) {
  std::ifstream random("/dev/urandom", std::ios::binary);
  unsigned char bytes[16];
  random.read(reinterpret_cast<char*>(bytes), sizeof(bytes));
  if (!random) return absl::InternalError("cannot read /dev/urandom for the superuser's password");
  std::string password;
  for (unsigned char byte : bytes) absl::StrAppend(&password, absl::Hex(byte, absl::kZeroPad2));
  if (absl::Status written = WriteSecret(password_path, password + "\n"); !written.ok()) return written;
  return WriteSecret(user_path, absl::StrCat(LocalCluster::kSuperuser, " ", password, "\n"));
}

}  // namespace

absl::Status LocalCluster::SetUpAuth(NodeConfigFile& shared) const {
  if (absl::Status written = WriteSuperuserPassword(superuser_password_path(), superuser_path()); !written.ok()) {
    return written;
  }
  shared.mutable_auth()->set_required(true);
  shared.mutable_auth()->set_superuser(kSuperuser);
  shared.mutable_auth()->set_superuser_password_file(fs::absolute(superuser_password_path()).string());
  return absl::OkStatus();
}

absl::Status LocalCluster::SetUpNodeTls(NodeId id, const std::string& host, NodeConfigFile& config) const {
  const std::string prefix = fs::absolute(NodeDirectory(id) + "/node").string();
  const std::string ca_directory = fs::absolute(directory_).string();
  if (absl::Status made = MakeNodeCertificate(ca_directory, prefix, absl::StrCat("charybdis node ", id), {host});
      !made.ok()) {
    return made;
  }
  Tls* tls = config.mutable_tls();
  tls->set_certificate_file(prefix + ".pem");
  tls->set_private_key_file(prefix + ".key");
  tls->set_ca_file(ca_directory + "/ca.pem");
  tls->set_clients(Tls::REQUIRED);
  tls->set_internode(true);
  return absl::OkStatus();
}

absl::Status LocalCluster::WriteNodeConfig(NodeId id, const std::string& host, bool tls, NodeConfigFile config,
                                           const std::string& extra_lines) const {
  std::error_code error;
  fs::create_directories(NodeDirectory(id), error);
  if (tls) {
    if (absl::Status made = SetUpNodeTls(id, host, config); !made.ok()) return made;
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(config, &text);
  std::ofstream file(NodeDirectory(id) + "/node.textproto");
  file << text << extra_lines;
  if (!file) return absl::InternalError(absl::StrCat("cannot write the config of node ", id));
  return absl::OkStatus();
}

std::string LocalCluster::superuser_password_path() const { return directory_ + "/superuser_password"; }
std::string LocalCluster::superuser_path() const { return directory_ + "/superuser.txt"; }

namespace {

// The options are checked before any node is set up: a schema's error
// names the statement, not a line of a generated config.
absl::Status CheckOptions(const LocalCluster::Options& options) {
  if (options.nodes == 0 || options.shards == 0) {
    return absl::InvalidArgumentError("a cluster needs at least one node and one shard");
  }
  if (options.replication_factor == 0 || options.replication_factor > options.nodes) {
    return absl::InvalidArgumentError(absl::StrCat("replication factor ", options.replication_factor,
                                                   " must be between 1 and ", options.nodes));
  }
  const cql::BootstrapSchema schema =
      cql::BuildBootstrapSchema(options.cql_schema, {{"dc1", options.nodes}});
  if (schema.problems.empty()) return absl::OkStatus();
  std::string problems;
  for (const auto& [index, problem] : schema.problems) {
    absl::StrAppend(&problems, "\n  statement ", index + 1, " (", options.cql_schema[index], "): ", problem);
  }
  return absl::InvalidArgumentError(absl::StrCat("the CQL schema is not valid:", problems));
}

}  // namespace

absl::StatusOr<LocalCluster> LocalCluster::Create(const std::string& directory,
                                                  const std::string& node_binary, Options options) {
  if (absl::Status checked = CheckOptions(options); !checked.ok()) return checked;
  LocalCluster cluster(directory, node_binary);
  if (fs::exists(cluster.NodeDirectory(1) + "/node.textproto")) {
    return absl::AlreadyExistsError(absl::StrCat(directory, " holds a cluster already (cluster down first)"));
  }
  absl::StatusOr<NodeAddresses> addresses = PickAddresses(options);
  if (!addresses.ok()) return addresses.status();
  const auto address = [&](NodeId id, int port_index) {
    return absl::StrCat(addresses->hosts[id - 1], ":", addresses->ports[kPortsPerNode * (id - 1) + port_index]);
  };
  NodeConfigFile shared;
  shared.set_shards(options.shards);
  ReplicationFactor* factor = shared.add_replication();
  factor->set_datacenter("dc1");
  factor->set_replication_factor(options.replication_factor);
  if (options.tables.empty()) options.tables = {TableNamed("kv"), TableNamed("registers")};
  for (const Table& table : options.tables) *shared.add_table() = table;
  for (const std::string& statement : options.cql_schema) shared.add_cql_schema(statement);
  shared.set_token_seed(1);
  if (options.auth) {
    if (absl::Status auth = cluster.SetUpAuth(shared); !auth.ok()) return auth;
  }
  if (options.tls) {
    std::error_code error;
    fs::create_directories(directory, error);
    if (absl::Status made = MakeCertificateAuthority(directory); !made.ok()) return made;
  }
  for (NodeId id = 1; id <= options.nodes; id++) {
    Member* member = shared.add_member();
    member->set_id(id);
    member->set_datacenter("dc1");
    member->set_rack(absl::StrCat("r", id));
    member->set_internode_address(address(id, 0));
    member->set_client_address(address(id, 1));
    member->set_cql_address(address(id, 3));
  }
  for (NodeId id = 1; id <= options.nodes; id++) {
    NodeConfigFile config = shared;
    config.set_node_id(id);
    config.set_data_directory(fs::absolute(cluster.NodeDirectory(id) + "/data").string());
    config.set_metrics_address(address(id, 2));
    config.set_cql_shard_aware_port(addresses->ports[kPortsPerNode * (id - 1) + 4]);
    // A local cluster is for testing: `kill --power` can cut its power.
    config.set_power_loss_journal(options.power_loss_journal);
    if (absl::Status written = cluster.WriteNodeConfig(id, addresses->hosts[id - 1], options.tls, std::move(config),
                                                       options.extra_config + "\n");
        !written.ok()) {
      return written;
    }
  }
  if (absl::Status loaded = cluster.Load(); !loaded.ok()) return loaded;
  return cluster;
}

absl::StatusOr<NodeId> LocalCluster::AddNode(const std::string& rack, NodeId replaces) {
  const auto id = static_cast<NodeId>(configs_.size() + 1);
  NodeConfigFile config = configs_.front();  // the members, shared settings and extra lines
  const Member& first = config.member(0);
  NewNodePlacement placement;
  placement.set_datacenter(first.datacenter());
  placement.set_rack(rack.empty() ? absl::StrCat("r", id) : rack);
  if (replaces != 0) {
    if (replaces > configs_.size()) return absl::InvalidArgumentError(absl::StrCat("the cluster has no node ", replaces));
    if (Running(replaces)) {
      return absl::FailedPreconditionError(absl::StrCat("node ", replaces, " runs: a replacement takes a dead node's place (cluster kill ", replaces, " first)"));
    }
    // Where the dead node stood: its new_node placement, or its member entry.
    const NodeConfigFile& dead = configs_.at(replaces - 1);
    if (dead.has_new_node()) {
      placement = dead.new_node();
    } else {
      for (const Member& member : dead.member()) {
        if (member.id() != replaces) continue;
        placement.set_datacenter(member.datacenter());
        placement.set_rack(member.rack());
      }
    }
    placement.set_replaces(replaces);
  }
  const std::string first_host = first.internode_address().substr(0, first.internode_address().rfind(':'));
  std::vector<std::string> addresses;
  std::vector<int> ports;
  if (first_host != "127.0.0.1") {
    // Own addresses: the next one of the cluster's block, on the standard ports.
    const std::string host = absl::StrCat(first_host.substr(0, first_host.rfind('.')), ".", id);
    const std::vector<int> standard(std::begin(kStandardPorts), std::end(kStandardPorts));
    if (id > 254 || !PortsFree(host, standard)) {
      return absl::UnavailableError(absl::StrCat(host, " does not have the standard ports free for node ", id));
    }
    for (int port : standard) addresses.push_back(absl::StrCat(host, ":", port));
    ports = standard;
  } else {
    auto free = FreePorts(kPortsPerNode);
    if (!free.ok()) return free.status();
    ports = *free;
    for (int port : ports) addresses.push_back(absl::StrCat("127.0.0.1:", port));
  }
  config.set_node_id(id);
  config.set_data_directory(fs::absolute(NodeDirectory(id) + "/data").string());
  config.set_internode_address(addresses[0]);
  config.set_client_address(addresses[1]);
  config.set_metrics_address(addresses[2]);
  config.set_cql_address(addresses[3]);
  config.set_cql_shard_aware_port(static_cast<uint32_t>(ports[4]));
  *config.mutable_new_node() = placement;
  const std::string host = addresses[0].substr(0, addresses[0].rfind(':'));
  const bool tls = config.has_tls();
  if (absl::Status written = WriteNodeConfig(id, host, tls, std::move(config), ""); !written.ok()) return written;
  if (absl::Status loaded = Load(); !loaded.ok()) return loaded;
  return id;
}

absl::StatusOr<LocalCluster> LocalCluster::Open(const std::string& directory,
                                                const std::string& node_binary) {
  LocalCluster cluster(directory, node_binary);
  if (absl::Status loaded = cluster.Load(); !loaded.ok()) return loaded;
  return cluster;
}

absl::Status LocalCluster::Load() {
  configs_.clear();
  for (NodeId id = 1; fs::exists(NodeDirectory(id) + "/node.textproto"); id++) {
    NodeConfigFile config;
    if (!google::protobuf::TextFormat::ParseFromString(ReadFile(NodeDirectory(id) + "/node.textproto"),
                                                        &config)) {
      return absl::DataLossError(absl::StrCat("cannot parse the config of node ", id));
    }
    configs_.push_back(std::move(config));
  }
  if (configs_.empty()) {
    return absl::NotFoundError(absl::StrCat(directory_, " holds no cluster (cluster up first)"));
  }
  const NodeConfigFile& first = configs_.front();
  access_.ca_pem = first.tls().clients() == Tls::OFF ? "" : ReadFile(first.tls().ca_file());
  if (first.auth().required()) {
    std::istringstream superuser(ReadFile(superuser_path()));
    superuser >> access_.role >> access_.password;
  }
  return absl::OkStatus();
}

std::string LocalCluster::NodeDirectory(NodeId id) const {
  return absl::StrCat(directory_, "/node", id);
}
std::string LocalCluster::data_directory(NodeId id) const { return configs_.at(id - 1).data_directory(); }
std::string LocalCluster::log_path(NodeId id) const { return NodeDirectory(id) + "/node.log"; }
std::string LocalCluster::metrics_address(NodeId id) const {
  return configs_.at(id - 1).metrics_address();
}
// A node's own field, else its member entry's (a new node has no entry).
std::string LocalCluster::cql_address(NodeId id) const {
  const NodeConfigFile& config = configs_.at(id - 1);
  if (!config.cql_address().empty()) return config.cql_address();
  for (const Member& member : config.member()) {
    if (member.id() == id) return member.cql_address();
  }
  return "";
}

std::string LocalCluster::client_address(NodeId id) const {
  const NodeConfigFile& config = configs_.at(id - 1);
  if (!config.client_address().empty()) return config.client_address();
  for (const Member& member : config.member()) {
    if (member.id() == id) return member.client_address();
  }
  return "";
}

std::vector<NodeId> LocalCluster::nodes() const {
  std::vector<NodeId> ids;
  for (NodeId id = 1; id <= configs_.size(); id++) ids.push_back(id);
  return ids;
}

int LocalCluster::Pid(NodeId id) const {
  std::ifstream file(NodeDirectory(id) + "/pid");
  int pid = 0;
  file >> pid;
  return IsNode(pid, NodeDirectory(id) + "/node.textproto") ? pid : 0;
}

bool LocalCluster::Running(NodeId id) const { return Alive(Pid(id)); }

uint64_t LocalCluster::ResidentBytes(NodeId id) const {
  const int pid = Pid(id);
  if (pid == 0) return 0;
  std::istringstream status(ReadFile(absl::StrCat("/proc/", pid, "/status")));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    const absl::string_view value = absl::string_view(line).substr(6);  // "   1234 kB"
    uint64_t kib = 0;
    return absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::StripSuffix(value, "kB")), &kib) ? kib << 10 : 0;
  }
  return 0;
}

namespace {

std::mutex process_access_mutex;
ClientAccess process_access;  // UseClientAccess's

// Puts the role and password into every call's metadata.
class CredentialsInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit CredentialsInterceptor(const ClientAccess& access) : role_(access.role), password_(access.password) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      std::multimap<std::string, std::string>* metadata = methods->GetSendInitialMetadata();
      metadata->emplace(kRoleMetadata, role_);
      metadata->emplace(kPasswordMetadata, password_);
    }
    methods->Proceed();
  }

 private:
  const std::string role_;
  const std::string password_;
};

class CredentialsInterceptorFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit CredentialsInterceptorFactory(ClientAccess access) : access_(std::move(access)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(grpc::experimental::ClientRpcInfo*) override {
    return new CredentialsInterceptor(access_);
  }

 private:
  const ClientAccess access_;
};

}  // namespace

void UseClientAccess(ClientAccess access) {
  std::lock_guard<std::mutex> lock(process_access_mutex);
  process_access = std::move(access);
}

std::unique_ptr<Client::Stub> ConnectClient(const std::string& address) {
  std::lock_guard<std::mutex> lock(process_access_mutex);
  return ConnectClient(address, process_access);
}

std::unique_ptr<Client::Stub> ConnectClient(const std::string& address, const ClientAccess& access) {
  grpc::ChannelArguments arguments;
  // A node that is starting refuses the first attempts: retry soon.
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 50);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!access.ca_pem.empty()) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = access.ca_pem;
    credentials = grpc::SslCredentials(options);
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  if (!access.role.empty()) interceptors.push_back(std::make_unique<CredentialsInterceptorFactory>(access));
  return Client::NewStub(
      grpc::experimental::CreateCustomChannelWithInterceptors(address, credentials, arguments, std::move(interceptors)));
}

absl::StatusOr<uint64_t> LocalCluster::MetricTotal(NodeId id, const std::string& name) const {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  MetricsResponse response;
  if (const grpc::Status status = Connect(id)->Metrics(&context, MetricsRequest(), &response); !status.ok()) {
    return absl::UnavailableError(absl::StrCat("node ", id, " gave no metrics: ", status.error_message()));
  }
  uint64_t total = 0;
  std::istringstream lines(response.text());
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + "{", 0) != 0) continue;  // `name{node="1",shard="0"} 42`
    uint64_t value = 0;
    if (!absl::SimpleAtoi(line.substr(line.rfind(' ') + 1), &value)) {
      return absl::DataLossError(absl::StrCat("node ", id, ": unreadable metrics line: ", line));
    }
    total += value;
  }
  return total;
}

std::unique_ptr<Client::Stub> LocalCluster::Connect(NodeId id) const {
  return ConnectClient(client_address(id), access_);
}

absl::Status LocalCluster::Start(NodeId id, int timeout_ms) {
  if (id < 1 || id > configs_.size()) return absl::InvalidArgumentError(absl::StrCat("no node ", id));
  int pid = Pid(id);
  if (pid == 0) {
    const std::string config = NodeDirectory(id) + "/node.textproto";
    auto started = StartDetached(node_binary_, {"--config=" + config}, log_path(id));
    if (!started.ok()) return started.status();
    pid = *started;
    std::ofstream(NodeDirectory(id) + "/pid") << pid << "\n";
  }
  // Up when it answers a status request.
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    // A fresh channel each time: one that failed to connect waits out its
    // back-off before trying again.
    auto stub = Connect(id);
    // (Running() would not do yet: until exec the child looks like us.)
    if (!Alive(pid)) {
      return absl::FailedPreconditionError(
          absl::StrCat("node ", id, " exited at start; its log ends:\n", Tail(log_path(id))));
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    StatusResponse status;
    if (stub->Status(&context, StatusRequest(), &status).ok()) return absl::OkStatus();
    if (Clock::now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("node ", id, " did not answer in time"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

absl::Status LocalCluster::StartAll(int timeout_ms) {
  for (NodeId id : nodes()) {
    if (absl::Status started = Start(id, timeout_ms); !started.ok()) return started;
  }
  return WaitForViews(timeout_ms);
}

absl::Status LocalCluster::WaitForViews(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string last_problem;
  while (Clock::now() < deadline) {
    std::set<NodeId> running;
    for (NodeId id : nodes()) {
      if (Running(id)) running.insert(id);
    }
    last_problem.clear();
    for (NodeId id : running) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
      StatusResponse status;
      if (!Connect(id)->Status(&context, StatusRequest(), &status).ok()) {
        last_problem = absl::StrCat("node ", id, " does not answer");
        break;
      }
      const std::set<NodeId> up(status.up().begin(), status.up().end());
      if (up != running) {
        last_problem = absl::StrCat("node ", id, " sees ", up.size(), " nodes up, not ", running.size());
        break;
      }
    }
    if (last_problem.empty()) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::DeadlineExceededError(absl::StrCat("views did not converge: ", last_problem));
}

absl::StatusOr<DroppedData> LocalCluster::Kill(NodeId id, bool power_cut) {
  const int pid = Pid(id);
  if (!Alive(pid)) return absl::FailedPreconditionError(absl::StrCat("node ", id, " is not running"));
  KillNow(pid);
  fs::remove(NodeDirectory(id) + "/pid");
  if (!power_cut) return DroppedData{};
  return DropUnsyncedData(data_directory(id));
}

absl::Status LocalCluster::Pause(NodeId id) {
  const int pid = Pid(id);
  if (!Alive(pid)) return absl::FailedPreconditionError(absl::StrCat("node ", id, " is not running"));
  kill(pid, SIGSTOP);
  return absl::OkStatus();
}

absl::Status LocalCluster::Resume(NodeId id) {
  const int pid = Pid(id);
  if (!Alive(pid)) return absl::FailedPreconditionError(absl::StrCat("node ", id, " is not running"));
  kill(pid, SIGCONT);
  return absl::OkStatus();
}

absl::Status LocalCluster::Stop(NodeId id, int timeout_ms) { return StopNodes({id}, timeout_ms); }

absl::Status LocalCluster::StopAll() { return StopNodes(nodes(), 15000); }

absl::Status LocalCluster::StopNodes(const std::vector<NodeId>& ids, int timeout_ms) {
  std::map<int, NodeId> stopping;  // by pid
  for (NodeId id : ids) {
    if (const int pid = Pid(id); Alive(pid)) stopping[pid] = id;
  }
  std::vector<int> pids;
  for (const auto& [pid, id] : stopping) pids.push_back(pid);
  absl::Status result;
  for (int pid : Terminate(pids, timeout_ms)) {
    result.Update(absl::DeadlineExceededError(absl::StrCat("node ", stopping[pid], " did not stop in time: killed")));
  }
  for (NodeId id : ids) fs::remove(NodeDirectory(id) + "/pid");
  return result;
}

namespace {

absl::Status SetBlocked(Client::Stub& stub, const std::set<NodeId>& nodes) {
  BlockRequest request;
  for (NodeId node : nodes) request.add_node(node);
  BlockResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  const grpc::Status status = stub.Block(&context, request, &response);
  if (!status.ok()) return absl::UnavailableError(status.error_message());
  return absl::OkStatus();
}

absl::StatusOr<std::set<NodeId>> Blocked(Client::Stub& stub) {
  StatusResponse status;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  const grpc::Status answer = stub.Status(&context, StatusRequest(), &status);
  if (!answer.ok()) return absl::UnavailableError(answer.error_message());
  return std::set<NodeId>(status.blocked().begin(), status.blocked().end());
}

}  // namespace

absl::Status LocalCluster::Partition(NodeId a, NodeId b) {
  // Both sides are told even if one does not answer (paused, say).
  absl::Status result;
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    if (from < 1 || from > configs_.size()) return absl::InvalidArgumentError(absl::StrCat("no node ", from));
    if (!Running(from)) continue;  // it learns nothing while down
    auto stub = Connect(from);
    auto blocked = Blocked(*stub);
    if (!blocked.ok()) {
      result.Update(blocked.status());
      continue;
    }
    blocked->insert(to);
    result.Update(SetBlocked(*stub, *blocked));
  }
  return result;
}

absl::Status LocalCluster::Heal() {
  absl::Status result;
  for (NodeId id : nodes()) {
    if (Running(id)) result.Update(SetBlocked(*Connect(id), {}));
  }
  return result;
}

}  // namespace charybdis::node
