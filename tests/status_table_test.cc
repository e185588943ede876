// ctl status's table (node/ctl/status_table.h): nodetool status's shape
// from the nodes' answers.

#include "node/ctl/status_table.h"

#include <gtest/gtest.h>

namespace charybdis::node {
namespace {

StatusResponse View(uint32_t node, std::vector<uint32_t> up, uint64_t load_bytes) {
  StatusResponse status;
  status.set_node_id(node);
  status.set_shards(2);
  status.set_topology_version(1);
  status.set_load_bytes(load_bytes);
  for (uint32_t id : up) status.add_up(id);
  for (uint32_t id = 1; id <= 3; id++) {
    Member* member = status.add_member();
    member->set_id(id);
    member->set_datacenter(id == 3 ? "dc2" : "dc1");
    member->set_rack("r" + std::to_string(id));
    member->set_internode_address("127.0.0.1:700" + std::to_string(id));
    (*status.mutable_member_state())[id] = id == 2 ? "leaving" : "normal";
    (*status.mutable_effective_ownership())[id] = id == 3 ? 1.0 : 0.5;
    (*status.mutable_host_id())[id] = "00000000-0000-0000-0000-00000000000" + std::to_string(id);
    for (int vnode = 0; vnode < 4; vnode++) {
      RingEntry* entry = status.add_ring();
      entry->set_node(id);
      entry->set_token(id * 100 + vnode);
    }
  }
  return status;
}

TEST(StatusTableTest, PrintsNodetoolsShapePerDatacenter) {
  const std::string table = StatusTable({{"127.0.0.1:9001", View(1, {1, 2}, 3 * 1024 * 1024), ""},
                                         {"127.0.0.1:9002", View(2, {1, 2, 3}, 1536), ""},
                                         {"127.0.0.1:9003", std::nullopt, "connection refused"}});
  EXPECT_NE(table.find("Datacenter: dc1\n===============\n"), std::string::npos) << table;
  EXPECT_NE(table.find("Datacenter: dc2\n"), std::string::npos);
  EXPECT_NE(table.find("--  Address"), std::string::npos);
  // Node 1's view: 3 is down; 2 is leaving; each node's load is its own.
  EXPECT_NE(table.find("UN  127.0.0.1:7001        3.00 MiB    4       50.0%             00000000-0000-0000-0000-000000000001  r1\n"),
            std::string::npos) << table;
  EXPECT_NE(table.find("UL  127.0.0.1:7002        1.50 KiB"), std::string::npos) << table;
  EXPECT_NE(table.find("DN  127.0.0.1:7003        ?           4       100.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("Topology version 1, as node 1 sees it."), std::string::npos);
  EXPECT_NE(table.find("node 2 at 127.0.0.1:9002: 2 shards; sees up: 1 2 3\n"), std::string::npos);
  EXPECT_NE(table.find("127.0.0.1:9003: no answer (connection refused)"), std::string::npos);
}

TEST(StatusTableTest, ANodeWhoseCqlPortIsOpenToEveryoneIsFlagged) {
  StatusResponse open = View(1, {1, 2, 3}, 0);
  open.set_cql_open_to_everyone(true);
  const std::string table = StatusTable({{"10.0.0.1:9160", open, ""}, {"10.0.0.2:9160", View(2, {1, 2, 3}, 0), ""}});
  EXPECT_NE(table.find("node 1 at 10.0.0.1:9160: 2 shards; sees up: 1 2 3; WARNING: its CQL port listens beyond "
                       "loopback and asks for no password"),
            std::string::npos) << table;
  EXPECT_EQ(table.find("WARNING", table.find("node 2 at")), std::string::npos) << table;
}

TEST(StatusTableTest, LeftMembersAreNotListed) {
  StatusResponse view = View(1, {1}, 0);
  (*view.mutable_member_state())[2] = "left";
  const std::string table = StatusTable({{"a", view, ""}});
  EXPECT_EQ(table.find("127.0.0.1:7002"), std::string::npos) << table;
  EXPECT_NE(table.find("127.0.0.1:7001"), std::string::npos);
}

TEST(StatusTableTest, TheRingListsEveryVnodeInTokenOrderPerDatacenter) {
  const std::string ring = RingTable({{"127.0.0.1:9001", View(1, {1, 2}, 2048), ""}});
  EXPECT_NE(ring.find("Datacenter: dc1\n"), std::string::npos) << ring;
  EXPECT_NE(ring.find("Address               Rack    Status State     Load        Owns      Token\n"), std::string::npos) << ring;
  EXPECT_NE(ring.find("127.0.0.1:7001        r1      Up     Normal    2.00 KiB    50.0%     100\n"), std::string::npos) << ring;
  EXPECT_NE(ring.find("127.0.0.1:7002        r2      Up     Leaving   ?           50.0%     203\n"), std::string::npos) << ring;
  EXPECT_NE(ring.find("127.0.0.1:7003        r3      Down   Normal    ?           100.0%    303\n"), std::string::npos) << ring;
  EXPECT_LT(ring.find(" 101\n"), ring.find(" 102\n"));  // in token order
  EXPECT_LT(ring.find("Datacenter: dc1"), ring.find("Datacenter: dc2"));
}

TEST(StatusTableTest, BytesReadAsNodetoolPrintsThem) {
  EXPECT_EQ(BytesText(512), "512 B");
  EXPECT_EQ(BytesText(12800), "12.50 KiB");
  EXPECT_EQ(BytesText(uint64_t{3} << 30), "3.00 GiB");
}

}  // namespace
}  // namespace charybdis::node
