// core/cql's side of the native protocol, against a backend that records
// the requests of ours it gets and answers as told: framing and protocol
// errors, the translation into our requests, errors with their details,
// prepared statements and paging.

#include <gtest/gtest.h>

#include "core/cql/auth_service.h"
#include "core/cql/compression.h"
#include "core/cql/connection.h"
#include "core/cql/consistency_code.h"
#include "core/cql/parser.h"
#include "core/data/big_endian.h"
#include "tests/fake_env.h"

namespace charybdis::cql {
namespace {

class RecordingBackend : public Backend {
 public:
  Probes* probes() override { return &counted; }
  testing::CountingProbes counted;
  void Execute(ClientRequest request, std::function<void(ClientResponse)> done) override {
    requests.push_back(request);
    done(answer(request));
  }
  const ClusterView& Cluster() override { return cluster; }
  std::shared_ptr<const Schema> CurrentSchema() override { return schema; }
  void Post(std::function<void()> task) override { posted.push_back(std::move(task)); }
  Nanos Now() override { return now; }
  const FunctionSources& functions() override { return functions_sources; }
  AuthService* auth() override { return auth_service; }

  // Runs what was posted, and what that posts, until nothing is left.
  void RunPosted() {
    while (!posted.empty()) {
      std::vector<std::function<void()>> tasks;
      tasks.swap(posted);
      for (auto& task : tasks) task();
    }
  }

  std::vector<std::function<void()>> posted;
  Nanos now = 0;
  FunctionSources functions_sources{[] { return int64_t{1'000'000}; }, [] { return uint64_t{42}; }};
  AuthService* auth_service = nullptr;

  ClusterView cluster;
  std::shared_ptr<const Schema> schema;

  std::vector<ClientRequest> requests;
  std::function<ClientResponse(const ClientRequest&)> answer = [](const ClientRequest&) {
    ClientResponse ok;
    ok.set_applied(true);
    return ok;
  };
};

struct Answer {
  FrameHeader header;
  std::string body;
};

class CqlProtocolTest : public ::testing::Test {
 protected:
  CqlProtocolTest()
      : connection_(prepared_, backend_, ShardInfo{1, 2, 12, 19042}, "client", [this](std::string frame) {
          answers_.push_back({ParseHeader(frame), frame.substr(kHeaderBytes)});
        }) {
    backend_.schema = std::shared_ptr<const Schema>(&schema_, [](const Schema*) {});  // the fixture's own
    for (const char* text : {"CREATE KEYSPACE app WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
                             "CREATE TABLE app.t (k int, c int, v text, n bigint, PRIMARY KEY (k, c))"}) {
      ParsedStatement parsed = *Parse(text);
      if (auto* keyspace = std::get_if<CreateKeyspace>(&parsed.statement)) {
        EXPECT_TRUE(schema_.Apply(*keyspace).ok());
      } else {
        EXPECT_TRUE(schema_.Apply(std::get<CreateTable>(parsed.statement)).ok());
      }
    }
  }

  bool Send(Opcode opcode, const std::string& body, int16_t stream = 1, uint8_t version = kProtocolVersion) {
    FrameHeader header;
    header.version = version;
    header.stream = stream;
    header.opcode = static_cast<uint8_t>(opcode);
    header.body_bytes = static_cast<uint32_t>(body.size());
    return connection_.OnFrame(header, body);
  }

  void Start(bool lwt_mark = false) {
    Writer startup;
    startup.Short(lwt_mark ? 2 : 1);
    startup.String("CQL_VERSION");
    startup.String("3.0.0");
    if (lwt_mark) {
      startup.String("SCYLLA_LWT_ADD_METADATA_MARK");
      startup.String("LWT_OPTIMIZATION_META_BIT_MASK=2147483648");
    }
    ASSERT_TRUE(Send(Opcode::kStartup, startup.Take()));
    ASSERT_EQ(Last().header.opcode, static_cast<uint8_t>(Opcode::kReady));
  }

  // A QUERY or EXECUTE body's parameters: consistency, values, page size.
  static void Parameters(Writer& out, ConsistencyLevel level, const std::vector<std::string>& values,
                         int32_t page_size = -1, const std::optional<std::string>& paging_state = std::nullopt) {
    out.Short(ToCqlConsistency(level));
    out.Byte((values.empty() ? 0 : 0x01) | (page_size > 0 ? 0x04 : 0) | (paging_state ? 0x08 : 0));
    if (!values.empty()) {
      out.Short(static_cast<uint16_t>(values.size()));
      for (const std::string& value : values) out.Bytes(value);
    }
    if (page_size > 0) out.Int(page_size);
    if (paging_state) out.Bytes(*paging_state);
  }

  bool Query(const std::string& text, ConsistencyLevel level = CL_QUORUM, const std::vector<std::string>& values = {},
             int32_t page_size = -1, const std::optional<std::string>& paging_state = std::nullopt) {
    Writer out;
    out.LongString(text);
    Parameters(out, level, values, page_size, paging_state);
    return Send(Opcode::kQuery, out.Take());
  }

  const Answer& Last() const { return answers_.back(); }
  // The last answer as an error: its code and message.
  std::pair<int32_t, std::string> LastError(Reader* rest = nullptr) {
    EXPECT_EQ(Last().header.opcode, static_cast<uint8_t>(Opcode::kError));
    reader_ = std::make_unique<Reader>(Last().body);
    const int32_t code = reader_->Int();
    std::string message = reader_->String();
    if (rest != nullptr) *rest = *reader_;
    return {code, message};
  }

  Schema schema_;
  PreparedStatements prepared_;
  RecordingBackend backend_;
  std::vector<Answer> answers_;
  Connection connection_;
  std::unique_ptr<Reader> reader_;
};

std::string Int(int32_t value) { return NativeInt(value); }

TEST_F(CqlProtocolTest, NegotiatesBeforeAnythingElse) {
  ASSERT_TRUE(Send(Opcode::kOptions, ""));
  EXPECT_EQ(Last().header.opcode, static_cast<uint8_t>(Opcode::kSupported));
  EXPECT_TRUE(Last().header.response);
  EXPECT_NE(Last().body.find("COMPRESSION"), std::string::npos);
  EXPECT_NE(Last().body.find("lz4"), std::string::npos);
  EXPECT_NE(Last().body.find("snappy"), std::string::npos);
  EXPECT_FALSE(Query("SELECT * FROM app.t WHERE k = 1"));
  EXPECT_EQ(LastError().first, static_cast<int32_t>(ErrorCode::kProtocol));
  EXPECT_TRUE(backend_.requests.empty());
}

// A STARTUP body asking for `compression`.
std::string StartupAsking(const std::string& compression) {
  Writer startup;
  startup.Short(2);
  startup.String("COMPRESSION");
  startup.String(compression);
  startup.String("CQL_VERSION");
  startup.String("3.0.0");
  return startup.Take();
}

// Frame compression as drivers ask for it in STARTUP: from the answer to
// STARTUP on, every frame the connection sends is compressed, and it takes
// compressed frames. Refused clearly: an algorithm we do not know, a
// compressed frame when none was asked for, a body that does not
// decompress or would exceed the largest frame, a second STARTUP that
// changes the algorithm.
TEST_F(CqlProtocolTest, CompressesFramesBothWaysOnceAsked) {
  for (Compression compression : {Compression::kLz4, Compression::kSnappy}) {
    std::vector<std::string> frames;
    Connection connection(prepared_, backend_, ShardInfo{}, "client",
                          [&frames](std::string frame) { frames.push_back(std::move(frame)); });
    auto send = [&connection](Opcode opcode, const std::string& body, uint8_t flags) {
      FrameHeader header;
      header.stream = 3;
      header.flags = flags;
      header.opcode = static_cast<uint8_t>(opcode);
      header.body_bytes = static_cast<uint32_t>(body.size());
      return connection.OnFrame(header, body);
    };
    auto last_body = [&frames, compression]() -> std::string {
      const FrameHeader header = ParseHeader(frames.back());
      EXPECT_TRUE(header.flags & kCompressedFlag);
      absl::StatusOr<std::string> body =
          Decompress(compression, std::string_view(frames.back()).substr(kHeaderBytes), kMaxBodyBytes);
      EXPECT_TRUE(body.ok()) << body.status();
      return body.ok() ? *body : "";
    };
    ASSERT_TRUE(send(Opcode::kStartup, StartupAsking(compression == Compression::kLz4 ? "lz4" : "snappy"), 0));
    EXPECT_EQ(ParseHeader(frames.back()).opcode, static_cast<uint8_t>(Opcode::kReady));
    EXPECT_EQ(last_body(), "");
    Writer query;
    query.LongString("SELECT * FROM app.t WHERE k = 1");
    Parameters(query, CL_QUORUM, {});
    ASSERT_TRUE(send(Opcode::kQuery, Compress(compression, query.bytes()), kCompressedFlag));
    EXPECT_EQ(ParseHeader(frames.back()).opcode, static_cast<uint8_t>(Opcode::kResult));
    const std::string result = last_body();
    Reader rows(result);
    EXPECT_EQ(rows.Int(), 2);  // Rows
    // A frame sent uncompressed is taken too: the flag is per frame.
    ASSERT_TRUE(send(Opcode::kQuery, query.bytes(), 0));
    EXPECT_EQ(ParseHeader(frames.back()).opcode, static_cast<uint8_t>(Opcode::kResult));
    EXPECT_FALSE(send(Opcode::kQuery, "not " + Compress(compression, query.bytes()), kCompressedFlag));
    EXPECT_EQ(ParseHeader(frames.back()).opcode, static_cast<uint8_t>(Opcode::kError));
    EXPECT_FALSE(send(Opcode::kStartup, StartupAsking(compression == Compression::kLz4 ? "snappy" : "lz4"), 0));
    EXPECT_NE(last_body().find("cannot change the compression"), std::string::npos);
  }
  // What drivers send (made by the Python driver's codecs, from Debian's
  // python3-lz4 and python3-snappy): the length big-endian before LZ4's
  // block, and raw Snappy.
  const std::string sent = "charybdis charybdis charybdis";
  const std::string from_lz4("\x00\x00\x00\x1d\xaa\x63\x68\x61\x72\x79\x62\x64\x69\x73\x20\x0a\x00\x50\x79\x62\x64\x69\x73", 23);
  const std::string from_snappy("\x1d\x24\x63\x68\x61\x72\x79\x62\x64\x69\x73\x20\x4a\x0a\x00", 15);
  EXPECT_EQ(*Decompress(Compression::kLz4, from_lz4, kMaxBodyBytes), sent);
  EXPECT_EQ(*Decompress(Compression::kSnappy, from_snappy, kMaxBodyBytes), sent);
  EXPECT_EQ(Compress(Compression::kLz4, sent).substr(0, 4), from_lz4.substr(0, 4));
  // An LZ4 body that says it holds more than the largest frame.
  std::string huge;
  AppendBigEndian(huge, uint64_t{kMaxBodyBytes} + 1, 4);
  EXPECT_FALSE(Decompress(Compression::kLz4, huge + "x", kMaxBodyBytes).ok());
  EXPECT_FALSE(Decompress(Compression::kLz4, "", kMaxBodyBytes).ok());
  EXPECT_EQ(*Decompress(Compression::kLz4, std::string(4, '\0'), kMaxBodyBytes), "");  // gocql's empty body
  EXPECT_EQ(*Decompress(Compression::kLz4, Compress(Compression::kLz4, ""), kMaxBodyBytes), "");

  EXPECT_FALSE(Send(Opcode::kStartup, StartupAsking("zstd")));
  EXPECT_EQ(LastError().second, "Unknown compression algorithm: zstd");
  Start();
  FrameHeader compressed;
  compressed.stream = 1;
  compressed.flags = kCompressedFlag;
  compressed.opcode = static_cast<uint8_t>(Opcode::kOptions);
  EXPECT_FALSE(connection_.OnFrame(compressed, Compress(Compression::kLz4, "")));
  EXPECT_EQ(LastError().second, "compression was not negotiated");
}

// A hasher that answers nothing: the login's frames are checked before
// any hash is asked for.
class NoHashes final : public auth::PasswordHasher {
 public:
  void Hash(std::string, std::function<void(std::string)>) override { ADD_FAILURE() << "a hash was asked for"; }
  void Verify(std::string, std::string, int64_t, std::function<void(bool)>) override {
    ADD_FAILURE() << "a password was checked";
  }
  const std::string& decoy_hash() const override { return decoy_; }

 private:
  std::string decoy_ = "decoy";
};

// Bad input at the login (docs/security.md): every case gets a clear error
// before any request runs or any hash is asked for.
TEST_F(CqlProtocolTest, ALoginRefusesBadInputClearly) {
  NoHashes hasher;
  AuthService auth(AuthConfig{true, "admin", ""}, hasher);
  backend_.auth_service = &auth;
  Writer token;
  token.Bytes(std::string("\0admin\0pw", 9));
  // AUTH_RESPONSE before STARTUP: a protocol error.
  EXPECT_FALSE(Send(Opcode::kAuthResponse, token.bytes()));
  EXPECT_EQ(LastError().first, static_cast<int32_t>(ErrorCode::kProtocol));
  Writer startup;
  startup.Short(1);
  startup.String("CQL_VERSION");
  startup.String("3.0.0");
  ASSERT_TRUE(Send(Opcode::kStartup, startup.Take()));
  ASSERT_EQ(Last().header.opcode, static_cast<uint8_t>(Opcode::kAuthenticate));
  EXPECT_NE(Last().body.find("org.apache.cassandra.auth.PasswordAuthenticator"), std::string::npos);
  // A request before the login: a protocol error, and the connection closes.
  EXPECT_FALSE(Query("SELECT * FROM app.t WHERE k = 1"));
  EXPECT_NE(LastError().second.find("expecting AUTH_RESPONSE"), std::string::npos);
  // A body that is not [bytes], or has bytes after them.
  EXPECT_FALSE(Send(Opcode::kAuthResponse, std::string("\0\0", 2)));
  EXPECT_EQ(LastError().second, "malformed AUTH_RESPONSE body");
  EXPECT_FALSE(Send(Opcode::kAuthResponse, token.bytes() + "x"));
  EXPECT_EQ(LastError().second, "malformed AUTH_RESPONSE body");
  // A token too big, or not PLAIN: Bad credentials saying why; the
  // connection may try again.
  Writer huge;
  huge.Bytes(std::string(1 << 20, 'x'));
  EXPECT_TRUE(Send(Opcode::kAuthResponse, huge.Take()));
  EXPECT_EQ(LastError().first, static_cast<int32_t>(ErrorCode::kBadCredentials));
  EXPECT_NE(LastError().second.find("more than 4096"), std::string::npos);
  Writer empty;
  empty.Bytes(std::nullopt);
  EXPECT_TRUE(Send(Opcode::kAuthResponse, empty.Take()));
  EXPECT_EQ(LastError().first, static_cast<int32_t>(ErrorCode::kBadCredentials));
  EXPECT_TRUE(backend_.requests.empty());
}

TEST_F(CqlProtocolTest, AdvertisesScyllaShardAwareness) {
  ASSERT_TRUE(Send(Opcode::kOptions, ""));
  Reader in(Last().body);
  std::map<std::string, std::vector<std::string>> options;
  const uint16_t count = in.UnsignedShort();
  for (uint16_t i = 0; i < count; i++) {
    std::string key = in.String();
    options[key] = in.StringList();
  }
  ASSERT_TRUE(in.ok() && in.AtEnd());
  EXPECT_EQ(options["SCYLLA_SHARD"], std::vector<std::string>{"1"});
  EXPECT_EQ(options["SCYLLA_NR_SHARDS"], std::vector<std::string>{"2"});
  EXPECT_EQ(options["SCYLLA_SHARDING_ALGORITHM"], std::vector<std::string>{"biased-token-round-robin"});
  EXPECT_EQ(options["SCYLLA_SHARDING_IGNORE_MSB"], std::vector<std::string>{"12"});
  EXPECT_EQ(options["SCYLLA_SHARD_AWARE_PORT"], std::vector<std::string>{"19042"});
  EXPECT_EQ(options["SCYLLA_PARTITIONER"], std::vector<std::string>{"org.apache.cassandra.dht.Murmur3Partitioner"});
  EXPECT_EQ(options["SCYLLA_LWT_ADD_METADATA_MARK"], std::vector<std::string>{"LWT_OPTIMIZATION_META_BIT_MASK=2147483648"});
}

// The flags of a PREPARE answer's bind metadata.
uint32_t PreparedFlags(const std::string& body) {
  Reader in(body);
  in.Int();
  in.ShortBytes();
  return static_cast<uint32_t>(in.Int());
}

TEST_F(CqlProtocolTest, MarksConditionalStatementsForDriversThatAsk) {
  Start(/*lwt_mark=*/true);
  for (const auto& [text, conditional] : {std::pair{"UPDATE app.t SET v = ? WHERE k = ? AND c = ? IF v = ?", true},
                                          {"UPDATE app.t SET v = ? WHERE k = ? AND c = ?", false}}) {
    Writer prepare;
    prepare.LongString(text);
    ASSERT_TRUE(Send(Opcode::kPrepare, prepare.Take()));
    EXPECT_EQ((PreparedFlags(Last().body) & kLwtMetadataMark) != 0, conditional) << text;
  }
}

TEST_F(CqlProtocolTest, LeavesTheMarkOutForOtherDrivers) {
  Start();
  Writer prepare;
  prepare.LongString("INSERT INTO app.t (k, c) VALUES (?, ?) IF NOT EXISTS");
  ASSERT_TRUE(Send(Opcode::kPrepare, prepare.Take()));
  EXPECT_EQ(PreparedFlags(Last().body) & kLwtMetadataMark, 0u);
}

TEST_F(CqlProtocolTest, PushesOnlyTheEventsAConnectionRegisteredFor) {
  Start();
  const Event down = NodeEvent("STATUS_CHANGE", "DOWN", std::string("\x7f\0\0\1", 4), 9042);
  connection_.Push(down);
  const size_t before = answers_.size();
  Writer events;
  events.StringList({"STATUS_CHANGE"});
  ASSERT_TRUE(Send(Opcode::kRegister, events.Take()));
  connection_.Push(NodeEvent("TOPOLOGY_CHANGE", "NEW_NODE", std::string("\x7f\0\0\1", 4), 9042));
  connection_.Push(down);
  ASSERT_EQ(answers_.size(), before + 2);  // READY, then the one event
  EXPECT_EQ(Last().header.opcode, static_cast<uint8_t>(Opcode::kEvent));
  EXPECT_EQ(Last().header.stream, -1);
  Reader in(Last().body);
  EXPECT_EQ(in.String(), "STATUS_CHANGE");
  EXPECT_EQ(in.String(), "DOWN");
  EXPECT_EQ(in.Byte(), 4);
  in.Int();  // the address's 4 bytes
  EXPECT_EQ(in.Int(), 9042);
  EXPECT_TRUE(in.ok() && in.AtEnd());
}

TEST_F(CqlProtocolTest, AnswersANewerVersionSoThatDriversFallBack) {
  EXPECT_FALSE(Send(Opcode::kOptions, "", 3, 5));
  const auto [code, message] = LastError();
  EXPECT_EQ(code, static_cast<int32_t>(ErrorCode::kProtocol));
  EXPECT_NE(message.find("unsupported protocol version"), std::string::npos) << message;
  EXPECT_EQ(Last().header.stream, 3);
  EXPECT_EQ(Last().header.version, kProtocolVersion);
}

TEST_F(CqlProtocolTest, ProtocolErrorsWriteNothing) {
  Start();
  EXPECT_FALSE(Send(static_cast<Opcode>(0x1F), ""));
  EXPECT_EQ(LastError().first, static_cast<int32_t>(ErrorCode::kProtocol));
  Writer truncated;
  truncated.LongString("INSERT INTO app.t (k, c, v) VALUES (1, 2, 'x')");
  truncated.Short(ToCqlConsistency(CL_ONE));  // no flags byte
  EXPECT_FALSE(Send(Opcode::kQuery, truncated.Take()));
  EXPECT_EQ(LastError().first, static_cast<int32_t>(ErrorCode::kProtocol));
  FrameHeader oversized;
  oversized.stream = 9;
  oversized.body_bytes = kMaxBodyBytes + 1;
  connection_.RejectOversized(oversized);
  EXPECT_EQ(LastError().first, static_cast<int32_t>(ErrorCode::kProtocol));
  EXPECT_EQ(Last().header.stream, 9);
  EXPECT_TRUE(backend_.requests.empty());
}

TEST_F(CqlProtocolTest, AnInsertIsAWriteOfItsRowWithTheRowMarker) {
  Start();
  ASSERT_TRUE(Query("INSERT INTO app.t (k, c, v, n) VALUES (1, -2, 'x', ?) USING TTL 60", CL_LOCAL_QUORUM, {NativeBigint(7)}));
  ASSERT_EQ(backend_.requests.size(), 1u);
  const WriteOp& write = backend_.requests[0].write();
  EXPECT_EQ(write.table(), "app.t");
  EXPECT_EQ(write.partition_key(), Int(1));
  EXPECT_EQ(write.consistency(), CL_LOCAL_QUORUM);
  EXPECT_EQ(write.ttl_seconds(), 60u);
  std::map<std::string, std::string> puts;
  for (const ColumnValue& put : write.put()) puts[put.column()] = put.value();
  EXPECT_EQ(puts, (std::map<std::string, std::string>{{kRowMarker, ""}, {"n", ToComparable(Type{Kind::kBigint, {}}, NativeBigint(7))}, {"v", "x"}}));
  EXPECT_EQ(Last().header.opcode, static_cast<uint8_t>(Opcode::kResult));
  EXPECT_EQ(Reader(Last().body).Int(), 1);  // Void
}

TEST_F(CqlProtocolTest, ErrorsCarryWhatTheProtocolDefines) {
  Start();
  backend_.answer = [](const ClientRequest&) {
    ClientResponse response;
    response.set_code(ClientResponse::UNAVAILABLE);
    response.set_consistency(CL_ALL);
    response.set_blocked_for(3);
    response.set_alive(2);
    return response;
  };
  ASSERT_TRUE(Query("UPDATE app.t SET v = 'y' WHERE k = 1 AND c = 2", CL_ALL));
  Reader unavailable("");
  EXPECT_EQ(LastError(&unavailable).first, static_cast<int32_t>(ErrorCode::kUnavailable));
  EXPECT_EQ(unavailable.UnsignedShort(), ToCqlConsistency(CL_ALL));
  EXPECT_EQ(unavailable.Int(), 3);
  EXPECT_EQ(unavailable.Int(), 2);

  backend_.answer = [](const ClientRequest&) {
    ClientResponse response;
    response.set_code(ClientResponse::WRITE_TIMEOUT);
    response.set_consistency(CL_QUORUM);
    response.set_received(1);
    response.set_blocked_for(2);
    return response;
  };
  ASSERT_TRUE(Query("UPDATE app.t SET v = 'y' WHERE k = 1 AND c = 2 IF n <= 5"));
  ASSERT_TRUE(backend_.requests.back().has_cas());
  EXPECT_EQ(backend_.requests.back().cas().statement(0).condition(0).op(), charybdis::Condition::LE);
  Reader timeout("");
  EXPECT_EQ(LastError(&timeout).first, static_cast<int32_t>(ErrorCode::kWriteTimeout));
  EXPECT_EQ(timeout.UnsignedShort(), ToCqlConsistency(CL_QUORUM));
  EXPECT_EQ(timeout.Int(), 1);
  EXPECT_EQ(timeout.Int(), 2);
  EXPECT_EQ(timeout.String(), "CAS");

  const size_t sent = backend_.requests.size();
  ASSERT_TRUE(Query("SELECT * FORM app.t"));
  EXPECT_EQ(LastError().first, static_cast<int32_t>(ErrorCode::kSyntax));
  ASSERT_TRUE(Query("SELECT * FROM app.nope WHERE k = 1"));
  EXPECT_EQ(LastError(), std::make_pair(static_cast<int32_t>(ErrorCode::kInvalid), std::string("unconfigured table nope")));
  ASSERT_TRUE(Query("UPDATE app.t SET v = 'y' WHERE k = 1"));  // no clustering key
  EXPECT_EQ(LastError().first, static_cast<int32_t>(ErrorCode::kInvalid));
  EXPECT_EQ(backend_.requests.size(), sent);
}

TEST_F(CqlProtocolTest, RefusesStatementsThatCannotBeWellFormedWrites) {
  Start();
  for (const char* text : {"INSERT INTO app.t (k, c, c) VALUES (1, 2, 3)", "UPDATE app.t SET v = 'a', v = 'b' WHERE k = 1 AND c = 1",
                           "SELECT * FROM system.local WHERE token(key) = 0", "SELECT * FROM app.t WHERE k = 1 AND k > 0",
                           "BEGIN BATCH USING TTL 5 INSERT INTO app.t (k, c) VALUES (1, 1) APPLY BATCH"}) {
    ASSERT_TRUE(Query(text)) << text;
    EXPECT_EQ(LastError().first, static_cast<int32_t>(ErrorCode::kInvalid)) << text;
  }
  EXPECT_TRUE(backend_.requests.empty());
  ASSERT_TRUE(Query("BEGIN BATCH APPLY BATCH"));
  EXPECT_EQ(Reader(Last().body).Int(), 1);  // Void, answered
}

TEST_F(CqlProtocolTest, NamedMarkersKeepTheirNamesAndUnsetMeansNotGiven) {
  Start();
  Writer prepare;
  prepare.LongString("UPDATE app.t USING TTL :life SET v = :value WHERE k = :key AND c = 1");
  ASSERT_TRUE(Send(Opcode::kPrepare, prepare.Take()));
  Reader result(Last().body);
  result.Int();
  const std::string id = result.ShortBytes();
  result.Int();  // flags
  ASSERT_EQ(result.Int(), 3);
  result.Int();  // one partition key marker
  result.UnsignedShort();
  result.String();  // keyspace
  result.String();  // table
  std::vector<std::string> names;
  for (int i = 0; i < 3; i++) {
    names.push_back(result.String());
    result.UnsignedShort();  // its type
  }
  EXPECT_EQ(names, (std::vector<std::string>{"life", "value", "key"}));
  Writer execute;
  execute.ShortBytes(id);
  execute.Short(ToCqlConsistency(CL_ONE));
  execute.Byte(0x01);
  execute.Short(3);
  execute.Int(-2);  // TTL unset: none
  execute.Bytes(std::string("x"));
  execute.Bytes(Int(4));
  ASSERT_TRUE(Send(Opcode::kExecute, execute.Take()));
  ASSERT_EQ(backend_.requests.size(), 1u);
  EXPECT_EQ(backend_.requests[0].write().ttl_seconds(), 0u);
  EXPECT_EQ(backend_.requests[0].write().partition_key(), Int(4));
}

TEST_F(CqlProtocolTest, InWithOneMarkerBindsAList) {
  Start();
  Writer prepare;
  prepare.LongString("SELECT v FROM app.t WHERE k IN ? AND c = 1");
  ASSERT_TRUE(Send(Opcode::kPrepare, prepare.Take()));
  Reader result(Last().body);
  result.Int();
  const std::string id = result.ShortBytes();
  result.Int();
  ASSERT_EQ(result.Int(), 1);
  EXPECT_EQ(result.Int(), 0);  // no routing key: several partitions
  result.String();
  result.String();
  EXPECT_EQ(result.String(), "in(k)");
  EXPECT_EQ(result.UnsignedShort(), static_cast<uint16_t>(Kind::kList));
  EXPECT_EQ(result.UnsignedShort(), static_cast<uint16_t>(Kind::kInt));
  for (const auto& [list, requests] : {std::pair{NativeCollection({Int(3), Int(4), Int(5)}), 3u},
                                       {NativeCollection({Int(3), "bad"}), 0u}}) {
    backend_.requests.clear();
    Writer execute;
    execute.ShortBytes(id);
    Parameters(execute, CL_ONE, {list});
    ASSERT_TRUE(Send(Opcode::kExecute, execute.Take()));
    ASSERT_EQ(backend_.requests.size(), requests);
    if (requests == 0) {
      EXPECT_EQ(LastError().first, static_cast<int32_t>(ErrorCode::kInvalid));
    }
  }
  ASSERT_TRUE(Query("SELECT v FROM app.t WHERE k IN (1, 2) AND c = 1", CL_ONE));
  EXPECT_EQ(backend_.requests.size(), 2u);
}

TEST_F(CqlProtocolTest, PreparedStatementsRouteAndCanBeForgotten) {
  Start();
  Writer prepare;
  prepare.LongString("SELECT v FROM app.t WHERE c = ? AND k = ?");
  ASSERT_TRUE(Send(Opcode::kPrepare, prepare.Take()));
  Reader result(Last().body);
  EXPECT_EQ(result.Int(), 4);  // Prepared
  const std::string id = result.ShortBytes();
  result.Int();                       // flags
  EXPECT_EQ(result.Int(), 2);         // markers
  EXPECT_EQ(result.Int(), 1);         // partition key markers
  EXPECT_EQ(result.UnsignedShort(), 1);  // the second marker gives k

  Writer execute;
  execute.ShortBytes(id);
  Parameters(execute, CL_ONE, {Int(2), Int(1)});
  ASSERT_TRUE(Send(Opcode::kExecute, execute.Take()));
  ASSERT_EQ(backend_.requests.size(), 1u);
  EXPECT_EQ(backend_.requests[0].read().partition_key(), Int(1));
  EXPECT_FALSE(backend_.requests[0].read().range());

  Writer unknown;
  unknown.ShortBytes("0123456789abcdef");
  Parameters(unknown, CL_ONE, {});
  ASSERT_TRUE(Send(Opcode::kExecute, unknown.Take()));
  Reader details("");
  EXPECT_EQ(LastError(&details).first, static_cast<int32_t>(ErrorCode::kUnprepared));
  EXPECT_EQ(details.ShortBytes(), "0123456789abcdef");
  EXPECT_EQ(backend_.counted.reached["cql.unprepared"], 1);
}

TEST_F(CqlProtocolTest, AConditionalBatchIsOneConditionalWrite) {
  Start();
  Writer batch;
  batch.Byte(0);  // logged
  batch.Short(2);
  for (int c : {1, 2}) {
    batch.Byte(0);
    batch.LongString("INSERT INTO app.t (k, c, v) VALUES (5, ?, 'x') IF NOT EXISTS");
    batch.Short(1);
    batch.Bytes(Int(c));
  }
  batch.Short(ToCqlConsistency(CL_QUORUM));
  batch.Byte(0);
  ASSERT_TRUE(Send(Opcode::kBatch, batch.Take()));
  ASSERT_EQ(backend_.requests.size(), 1u);
  const CasOp& cas = backend_.requests[0].cas();
  ASSERT_EQ(cas.statement_size(), 2);
  EXPECT_TRUE(cas.statement(1).if_not_exists());
  EXPECT_EQ(cas.statement(0).write().partition_key(), cas.statement(1).write().partition_key());
  EXPECT_NE(cas.statement(0).write().clustering_key(), cas.statement(1).write().clustering_key());
  Reader rows(Last().body);
  EXPECT_EQ(rows.Int(), 2);  // Rows: [applied]
}

TEST_F(CqlProtocolTest, PagesResumeAfterTheLastRow) {
  Start();
  const Table& table = *schema_.FindTable("app", "t");
  backend_.answer = [&table](const ClientRequest& request) {
    ClientResponse response;
    for (int c = 0; c < 5; c++) {
      const std::string key = EncodeClustering(table, {Int(c)});
      if (key < request.read().start()) continue;
      charybdis::ResultRow* row = response.add_rows();
      row->set_clustering_key(key);
      charybdis::ResultCell* cell = row->add_cells();
      cell->set_column("v");
      cell->set_value("v" + std::to_string(c));
    }
    return response;
  };
  ASSERT_TRUE(Query("SELECT c, v FROM app.t WHERE k = 1", CL_ONE, {}, 2));
  Reader page(Last().body);
  EXPECT_EQ(page.Int(), 2);  // Rows
  EXPECT_EQ(page.Int() & 0x0002, 0x0002);  // has more pages
  EXPECT_EQ(page.Int(), 2);  // columns
  const std::optional<std::string> state = page.Bytes().bytes;
  ASSERT_TRUE(state.has_value());
  ASSERT_TRUE(Query("SELECT c, v FROM app.t WHERE k = 1", CL_ONE, {}, 2, state));
  ASSERT_EQ(backend_.requests.size(), 2u);
  EXPECT_GT(backend_.requests[1].read().start(), EncodeClustering(table, {Int(1)}));
  EXPECT_LT(backend_.requests[1].read().start(), EncodeClustering(table, {Int(2)}));
}

}  // namespace
}  // namespace charybdis::cql
