// The topology log's state machine and the placement it gives
// (core/topology/): each operation's stages, the refusals, and the pending
// replicas during a move.

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "core/env/random.h"
#include "core/topology/placement.h"
#include "core/topology/stream_plan.h"
#include "core/topology/topology.h"
#include "core/topology/topology_log.h"

namespace charybdis::topology {
namespace {

constexpr uint64_t kTokenSeed = 7;
constexpr uint32_t kVnodes = 16;

ReplicationConfig Rf(uint32_t factor) {
  ReplicationConfig replication;
  replication.per_datacenter["dc1"] = factor;
  return replication;
}

std::set<Token> TakenTokens(const Topology& topology) {
  std::set<Token> taken;
  for (const auto& [token, holder] : topology.TokenHolders()) taken.insert(token);
  return taken;
}

Member NewMember(NodeId id, const std::string& rack, const Topology& topology) {
  return Member{id, "127.0.0." + std::to_string(id), "dc1", rack,
                DrawTokensOfNewNode(kTokenSeed, id, kVnodes, TakenTokens(topology)), NodeState::kNormal};
}

// Nodes 1..count, racks r1, r2, r3 in turn, tokens as a static layout draws them.
Topology Cluster(NodeId count) {
  ClusterLayout layout;
  layout.vnodes_per_node = kVnodes;
  layout.token_seed = kTokenSeed;
  for (NodeId id = 1; id <= count; id++) layout.nodes.push_back({id, "dc1", "r" + std::to_string(1 + (id - 1) % 3)});
  layout.replication = Rf(1);
  std::vector<Member> members = MembersOfRing(TokenRing(layout));
  for (Member& member : members) member.address = "127.0.0." + std::to_string(member.id);
  return Topology::Bootstrap(members);
}

Entry Begin(Operation operation, NodeId node, Member joining = {}, NodeId replaced = 0) {
  return Entry{Entry::Kind::kBegin, operation, node, replaced, std::move(joining)};
}
Entry Step(Entry::Kind kind, NodeId node) { return Entry{kind, Operation::kJoin, node, 0, {}}; }

Topology Must(const absl::StatusOr<Topology>& next) {
  EXPECT_TRUE(next.ok()) << next.status();
  return next.ok() ? *next : Topology{};
}

// Every token of the ring, probed at its vnode tokens and between them.
std::vector<Token> Probes(const Placement& placement) {
  std::vector<Token> probes;
  for (const auto& vnode : placement.after()->tokens()) {
    probes.push_back(vnode.token);
    probes.push_back(vnode.token + 1);
  }
  return probes;
}

TEST(TopologyTest, TheBootstrapRingIsTheStaticLayoutsRing) {
  ClusterLayout layout;
  layout.vnodes_per_node = kVnodes;
  layout.token_seed = kTokenSeed;
  layout.replication = Rf(3);
  for (NodeId id = 1; id <= 5; id++) layout.nodes.push_back({id, "dc1", "r" + std::to_string(1 + (id - 1) % 3)});
  const TokenRing static_ring(layout);
  const Placement placement(Cluster(5), Rf(3), 1);
  EXPECT_EQ(placement.version(), 1u);
  for (const auto& vnode : static_ring.tokens()) {
    EXPECT_EQ(placement.ReadReplicasOf(vnode.token), static_ring.ReplicasOf(vnode.token));
    EXPECT_TRUE(placement.WriteReplicasOf(vnode.token).pending.empty());
  }
}

TEST(TopologyTest, AJoinWritesToTheNewNodeFirstThenReadsFromIt) {
  const Topology before = Cluster(3);
  const Topology joining = Must(before.Apply(Begin(Operation::kJoin, 4, NewMember(4, "r1", before))));
  EXPECT_EQ(joining.version(), 2u);
  EXPECT_EQ(joining.Find(4)->state, NodeState::kJoining);
  const Placement old_reads(joining, Rf(3), 1);
  size_t pending_tokens = 0;
  for (Token token : Probes(old_reads)) {
    const Placement::Replicas replicas = old_reads.WriteReplicasOf(token);
    EXPECT_EQ(replicas.natural.size(), 3u);
    EXPECT_EQ(std::count(replicas.natural.begin(), replicas.natural.end(), 4u), 0);
    ASSERT_LE(replicas.pending.size(), 1u);
    if (!replicas.pending.empty()) {
      EXPECT_EQ(replicas.pending[0], 4u);
      pending_tokens++;
    }
    EXPECT_EQ(old_reads.ReadReplicasOf(token), replicas.natural);  // reads stay with the old owners
  }
  EXPECT_GT(pending_tokens, 0u);

  const Topology reads_moved = Must(joining.Apply(Step(Entry::Kind::kReadNew, 4)));
  const Placement new_reads(reads_moved, Rf(3), 1);
  for (Token token : Probes(new_reads)) {
    EXPECT_EQ(new_reads.ReadReplicasOf(token), new_reads.after()->ReplicasOf(token));
    EXPECT_EQ(new_reads.WriteReplicasOf(token).pending, old_reads.WriteReplicasOf(token).pending);
  }

  const Topology joined = Must(reads_moved.Apply(Step(Entry::Kind::kFinish, 4)));
  EXPECT_EQ(joined.version(), 4u);
  EXPECT_EQ(joined.Find(4)->state, NodeState::kNormal);
  EXPECT_FALSE(joined.move().has_value());
  const Placement after(joined, Rf(3), 1);
  for (Token token : Probes(after)) {
    EXPECT_TRUE(after.WriteReplicasOf(token).pending.empty());
    EXPECT_EQ(after.ReadReplicasOf(token), new_reads.after()->ReplicasOf(token));
  }
}

TEST(TopologyTest, AJoiningNodesTokensMustBeFree) {
  const Topology cluster = Cluster(3);
  Member greedy = NewMember(4, "r1", cluster);
  greedy.tokens.push_back(cluster.Find(2)->tokens[0]);
  const absl::StatusOr<Topology> refused = cluster.Apply(Begin(Operation::kJoin, 4, greedy));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("is node 2's"), std::string::npos) << refused.status();
  EXPECT_EQ(cluster.TokenHolders().size(), 3u * kVnodes);
}

TEST(TopologyTest, AJoiningMembersIdIsTheEntrysNode) {
  const Topology cluster = Cluster(3);
  // Entries read from the log always agree (EntryOfColumns); one built
  // otherwise must not slip a member in under another id.
  const absl::StatusOr<Topology> refused = cluster.Apply(Begin(Operation::kJoin, 4, NewMember(5, "r1", cluster)));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("needs an id"), std::string::npos) << refused.status();
  EXPECT_EQ(cluster.Find(5), nullptr);
}

TEST(TopologyTest, APlacementsRingsKeepTheShardCount) {
  // Clients and ctl route to a replica's shard by the ring's count.
  const Topology joining = Must(Cluster(3).Apply(Begin(Operation::kJoin, 4, NewMember(4, "r1", Cluster(3)))));
  const Placement placement(joining, Rf(3), 7);
  EXPECT_EQ(placement.now()->layout().shards_per_node, 7u);
  EXPECT_EQ(placement.after()->layout().shards_per_node, 7u);
}

TEST(TopologyTest, OneOperationRunsAtATimeAndTheRefusalSaysWhich) {
  const Topology cluster = Cluster(4);
  const Topology leaving = Must(cluster.Apply(Begin(Operation::kDecommission, 2)));
  const absl::StatusOr<Topology> second = leaving.Apply(Begin(Operation::kJoin, 5, NewMember(5, "r2", leaving)));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("decommission of node 2"), std::string::npos) << second.status();
  EXPECT_NE(second.status().message().find("one runs at a time"), std::string::npos);
  EXPECT_NE(second.status().message().find("since version 2"), std::string::npos) << second.status();
  EXPECT_FALSE(leaving.Apply(Begin(Operation::kRemove, 3)).ok());
  // Steps of another node's operation, and steps out of order, are refused too.
  EXPECT_FALSE(leaving.Apply(Step(Entry::Kind::kReadNew, 3)).ok());
  EXPECT_FALSE(leaving.Apply(Step(Entry::Kind::kFinish, 2)).ok());
  EXPECT_FALSE(cluster.Apply(Step(Entry::Kind::kReadNew, 2)).ok());
}

TEST(TopologyTest, ADecommissionedNodeLeavesForGood) {
  const Topology cluster = Cluster(4);
  const Topology leaving = Must(cluster.Apply(Begin(Operation::kDecommission, 2)));
  const Placement during(leaving, Rf(3), 1);
  for (Token token : Probes(during)) {
    const Placement::Replicas replicas = during.WriteReplicasOf(token);
    const bool owned = std::count(replicas.natural.begin(), replicas.natural.end(), 2u) > 0;
    // Whoever gains 2's ranges is pending; nothing else moves.
    EXPECT_EQ(replicas.pending.size(), owned ? 1u : 0u);
    EXPECT_EQ(std::count(replicas.pending.begin(), replicas.pending.end(), 2u), 0);
  }
  const Topology left = Must(Must(leaving.Apply(Step(Entry::Kind::kReadNew, 2))).Apply(Step(Entry::Kind::kFinish, 2)));
  EXPECT_EQ(left.Find(2)->state, NodeState::kLeft);
  EXPECT_TRUE(left.Find(2)->tokens.empty());
  EXPECT_EQ(left.OwnersNow().count(2), 0u);
  const absl::StatusOr<Topology> back = left.Apply(Begin(Operation::kJoin, 2, NewMember(2, "r2", left)));
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("never comes back"), std::string::npos) << back.status();
}

TEST(TopologyTest, AReplacementTakesTheDeadNodesTokensAndNothingElseMoves) {
  const Topology cluster = Cluster(4);
  Member fresh = NewMember(5, cluster.Find(3)->rack, cluster);
  fresh.tokens.clear();
  Member other_rack = fresh;
  other_rack.rack = "r9";
  EXPECT_FALSE(cluster.Apply(Begin(Operation::kReplace, 5, other_rack, 3)).ok());
  const Topology replacing = Must(cluster.Apply(Begin(Operation::kReplace, 5, fresh, 3)));
  EXPECT_EQ(replacing.Find(5)->tokens, cluster.Find(3)->tokens);
  EXPECT_EQ(replacing.Find(5)->state, NodeState::kReplacing);
  const Placement during(replacing, Rf(3), 1);
  for (Token token : Probes(during)) {
    const Placement::Replicas replicas = during.WriteReplicasOf(token);
    const bool owned = std::count(replicas.natural.begin(), replicas.natural.end(), 3u) > 0;
    EXPECT_EQ(replicas.pending, owned ? std::vector<NodeId>{5} : std::vector<NodeId>{});
  }
  const Topology replaced = Must(Must(replacing.Apply(Step(Entry::Kind::kReadNew, 5))).Apply(Step(Entry::Kind::kFinish, 5)));
  EXPECT_EQ(replaced.Find(3)->state, NodeState::kLeft);
  EXPECT_EQ(replaced.Find(5)->state, NodeState::kNormal);
  Member elsewhere = NewMember(6, "r1", replaced);
  elsewhere.datacenter = "dc2";
  elsewhere.tokens.clear();
  EXPECT_FALSE(replaced.Apply(Begin(Operation::kReplace, 6, elsewhere, 4)).ok());  // another datacenter
  EXPECT_FALSE(replaced.Apply(Begin(Operation::kReplace, 6, NewMember(6, "r1", replaced), 3)).ok());  // 3 left
}

TEST(TopologyTest, AnOperationRollsBackOnlyBeforeItsReadsMove) {
  const Topology cluster = Cluster(4);
  const Topology joining = Must(cluster.Apply(Begin(Operation::kJoin, 5, NewMember(5, "r2", cluster))));
  const Topology undone = Must(joining.Apply(Step(Entry::Kind::kRollBack, 5)));
  EXPECT_EQ(undone.Find(5)->state, NodeState::kLeft);  // its id is spent
  EXPECT_EQ(undone.OwnersNow(), cluster.OwnersNow());
  const Topology leaving = Must(cluster.Apply(Begin(Operation::kRemove, 1)));
  EXPECT_EQ(Must(leaving.Apply(Step(Entry::Kind::kRollBack, 1))).Find(1)->state, NodeState::kNormal);
  const Topology moved = Must(leaving.Apply(Step(Entry::Kind::kReadNew, 1)));
  const absl::StatusOr<Topology> late = moved.Apply(Step(Entry::Kind::kRollBack, 1));
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.status().message().find("can only finish"), std::string::npos);
}

TEST(TopologyTest, AClusterDoesNotShrinkBelowItsReplicationFactor) {
  const Topology three = Cluster(3);
  const Topology leaving = Must(three.Apply(Begin(Operation::kDecommission, 1)));
  const absl::Status placeable = CheckPlaceable(leaving, Rf(3));
  EXPECT_FALSE(placeable.ok());
  EXPECT_NE(placeable.message().find("fewer than its replication factor 3"), std::string::npos) << placeable;
  EXPECT_TRUE(CheckPlaceable(leaving, Rf(2)).ok());
  EXPECT_FALSE(Cluster(1).Apply(Begin(Operation::kDecommission, 1)).ok());  // the last node
}

// Random operations on random racks: a token never has more than one
// pending replica, the natural ones are always RF, and pending ones are
// never natural.
TEST(TopologyTest, EveryStepOfRandomOperationsGivesATokenOnePendingReplicaAtMost) {
  Random random(11);
  Topology topology = Cluster(5);
  NodeId next_id = 6;
  for (int round = 0; round < 200; round++) {
    std::vector<NodeId> normal;
    for (const auto& [id, member] : topology.members()) {
      if (member.state == NodeState::kNormal) normal.push_back(id);
    }
    const NodeId subject = normal[random.Below(normal.size())];
    const std::string rack = "r" + std::to_string(1 + random.Below(4));
    Entry begin;
    switch (random.Below(4)) {
      case 0: begin = Begin(Operation::kJoin, next_id, NewMember(next_id, rack, topology)); break;
      case 1: begin = Begin(Operation::kDecommission, subject); break;
      case 2: begin = Begin(Operation::kRemove, subject); break;
      default: {
        Member fresh = NewMember(next_id, topology.Find(subject)->rack, topology);
        fresh.tokens.clear();
        begin = Begin(Operation::kReplace, next_id, fresh, subject);
      }
    }
    absl::StatusOr<Topology> begun = topology.Apply(begin);
    ASSERT_TRUE(begun.ok()) << begun.status();
    if (!CheckPlaceable(*begun, Rf(3)).ok()) continue;  // refused by the operation's caller
    if (begin.operation == Operation::kJoin || begin.operation == Operation::kReplace) next_id++;
    const NodeId mover = begin.node;
    for (Entry::Kind kind : {Entry::Kind::kReadNew, Entry::Kind::kFinish}) {
      const Placement placement(*begun, Rf(3), 1);
      for (Token token : Probes(placement)) {
        const Placement::Replicas replicas = placement.WriteReplicasOf(token);
        ASSERT_EQ(replicas.natural.size(), 3u);
        ASSERT_LE(replicas.pending.size(), 1u) << "round " << round;
        for (NodeId node : replicas.pending) {
          ASSERT_EQ(std::count(replicas.natural.begin(), replicas.natural.end(), node), 0);
        }
      }
      begun = begun->Apply(Step(kind, mover));
      ASSERT_TRUE(begun.ok()) << begun.status();
    }
    topology = *begun;
    ASSERT_FALSE(topology.move().has_value());
  }
  EXPECT_GT(topology.version(), 200u);
}

// The (to, from) pairs of a plan whose spans hold `token`.
std::set<std::pair<NodeId, NodeId>> PlannedAt(const std::vector<Transfer>& plan, Token token) {
  std::set<std::pair<NodeId, NodeId>> pairs;
  for (const Transfer& transfer : plan) {
    for (const TokenSpan& span : transfer.spans) {
      if (span.first <= token && token <= span.last) pairs.insert({transfer.to, transfer.from});
    }
  }
  return pairs;
}

// Checks a plan at every probe: each pending replica gets the token from
// exactly the sources `sources_of(natural, after)` names, and nothing else
// streams; spans are ascending, disjoint and merged.
void ExpectPlan(const Topology& topology,
                const std::function<std::vector<NodeId>(const std::vector<NodeId>&, const std::vector<NodeId>&)>& sources_of,
                const PlacedBy& placed_by = PlacedBy{Rf(3), Rf(3)}) {
  const Placement placement(topology, placed_by, 1);
  const std::vector<Transfer> plan = PlanStreams(topology, placed_by);
  ASSERT_FALSE(plan.empty());
  for (const Transfer& transfer : plan) {
    for (size_t i = 1; i < transfer.spans.size(); i++) {
      EXPECT_LT(transfer.spans[i - 1].last + 1, transfer.spans[i].first) << "unmerged or overlapping spans";
    }
  }
  for (Token token : Probes(placement)) {
    const Placement::Replicas replicas = placement.WriteReplicasOf(token);
    std::set<std::pair<NodeId, NodeId>> expected;
    for (NodeId to : replicas.pending) {
      for (NodeId from : sources_of(replicas.natural, placement.after()->ReplicasOf(token))) expected.insert({to, from});
    }
    EXPECT_EQ(PlannedAt(plan, token), expected) << "token " << token;
  }
}

TEST(StreamPlanTest, AJoiningNodeGetsEachRangeFromTheReplicaItDisplaces) {
  const Topology cluster = Cluster(5);
  const Topology joining = Must(cluster.Apply(Begin(Operation::kJoin, 6, NewMember(6, "r3", cluster))));
  ExpectPlan(joining, [](const std::vector<NodeId>& natural, const std::vector<NodeId>& after) {
    std::vector<NodeId> displaced;
    for (NodeId node : natural) {
      if (std::find(after.begin(), after.end(), node) == after.end()) displaced.push_back(node);
    }
    return displaced;
  });
  for (const Transfer& transfer : PlanStreams(joining, PlacedBy{Rf(3), Rf(3)})) EXPECT_EQ(transfer.to, 6u);
}

TEST(StreamPlanTest, ALeavingNodeSendsEveryRangeItGivesUp) {
  const Topology leaving = Must(Cluster(5).Apply(Begin(Operation::kDecommission, 2)));
  ExpectPlan(leaving, [](const std::vector<NodeId>&, const std::vector<NodeId>&) { return std::vector<NodeId>{2}; });
}

// The node that loses the ranges is dead: every survivor sends, so that a
// write acknowledged by it and one other is not lost.
TEST(StreamPlanTest, ADeadNodesRangesComeFromEverySurvivor) {
  const Topology removing = Must(Cluster(5).Apply(Begin(Operation::kRemove, 4)));
  auto survivors = [](const std::vector<NodeId>& natural, const std::vector<NodeId>&) {
    std::vector<NodeId> alive;
    for (NodeId node : natural) {
      if (node != 4) alive.push_back(node);
    }
    return alive;
  };
  ExpectPlan(removing, survivors);
  const Topology cluster = Cluster(5);
  Member fresh = NewMember(6, cluster.Find(4)->rack, cluster);
  fresh.tokens.clear();
  const Topology replacing = Must(cluster.Apply(Begin(Operation::kReplace, 6, fresh, 4)));
  ExpectPlan(replacing, survivors);
  for (const Transfer& transfer : PlanStreams(replacing, PlacedBy{Rf(3), Rf(3)})) EXPECT_EQ(transfer.to, 6u);
}

// Two replications' plans: one transfer per (to, from), spans unioned.
TEST(StreamPlanTest, MergedTransfersUniteTheSpansOfEachPair) {
  const std::vector<Transfer> merged = MergeTransfers({Transfer{2, 1, {{0, 10}, {30, 40}}},
                                                       Transfer{3, 1, {{0, 5}}},
                                                       Transfer{2, 1, {{5, 20}, {21, 25}, {41, 50}, {60, 70}}}});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].to, 2u);
  EXPECT_EQ(merged[0].spans, (std::vector<TokenSpan>{{0, 25}, {30, 50}, {60, 70}}));
  EXPECT_EQ(merged[1].to, 3u);
  EXPECT_EQ(merged[1].spans, (std::vector<TokenSpan>{{0, 5}}));
  const Token max = std::numeric_limits<Token>::max();
  EXPECT_EQ(MergeTransfers({Transfer{2, 1, {{max - 5, max}}}, Transfer{2, 1, {{max - 1, max}}}})[0].spans,
            (std::vector<TokenSpan>{{max - 5, max}}));
}

// An operation's own node drives it, or a normal member; a node being
// removed is dead and drives nothing.
Entry Replicate(NodeId driver, const ReplicationConfig& from, const ReplicationConfig& to) {
  Entry entry = Begin(Operation::kReplicate, driver);
  entry.driver = driver;
  entry.replicating = ReplicationMove{"ks", 4, from, to, "ALTER KEYSPACE ks WITH replication = {}"};
  return entry;
}

TEST(TopologyTest, AChangeOfReplicationPlacesItsKeyspaceByBothUntilItsSchemaCatchesUp) {
  const Topology cluster = Cluster(5);
  const TableReplication keyspace{"ks", 4, Rf(1)};
  const TableReplication another_life{"ks", 9, Rf(1)};
  const TableReplication the_clusters{"", 0, Rf(3)};
  const Topology begun = Must(cluster.Apply(Replicate(2, Rf(1), Rf(3))));
  EXPECT_EQ(begun.members().at(2).state, NodeState::kNormal);  // no node moves
  EXPECT_EQ(PlacedByOf(begun, keyspace).now, Rf(1));
  EXPECT_EQ(PlacedByOf(begun, keyspace).after, Rf(3));
  EXPECT_EQ(PlacedByOf(begun, another_life).after, Rf(1));
  EXPECT_EQ(PlacedByOf(begun, the_clusters).after, Rf(3));
  const Placement placement(begun, PlacedByOf(begun, keyspace), 1);
  for (Token token : Probes(placement)) {
    const Placement::Replicas replicas = placement.WriteReplicasOf(token);
    EXPECT_EQ(replicas.natural.size(), 1u);
    EXPECT_EQ(replicas.pending.size(), 2u);
    EXPECT_EQ(placement.ReadReplicasOf(token), replicas.natural);  // reads stay until they move
  }
  const Topology reading_new = Must(begun.Apply(Step(Entry::Kind::kReadNew, 2)));
  const Placement moved(reading_new, PlacedByOf(reading_new, keyspace), 1);
  for (Token token : Probes(moved)) EXPECT_EQ(moved.ReadReplicasOf(token).size(), 3u);
  const Topology finished = Must(reading_new.Apply(Step(Entry::Kind::kFinish, 2)));
  // A node whose schema does not hold the ALTER yet places the keyspace
  // by the new replication all the same; another life of it by its own.
  EXPECT_EQ(PlacedByOf(finished, keyspace).now, Rf(3));
  EXPECT_EQ(PlacedByOf(finished, keyspace).after, Rf(3));
  EXPECT_EQ(PlacedByOf(finished, TableReplication{"ks", 9, Rf(2)}).now, Rf(2));
  EXPECT_EQ(finished.changed_replications().at("ks").since_version, begun.version());
  // The next change goes from what this one gave, in that life only.
  EXPECT_FALSE(finished.Apply(Replicate(2, Rf(1), Rf(2))).ok());
  EXPECT_TRUE(finished.Apply(Replicate(2, Rf(3), Rf(2))).ok());
  Entry another_lifes = Replicate(2, Rf(1), Rf(2));
  another_lifes.replicating.keyspace_created_at = 9;
  EXPECT_TRUE(finished.Apply(another_lifes).ok());
  // Rolled back, nothing changed.
  const Topology rolled_back = Must(begun.Apply(Step(Entry::Kind::kRollBack, 2)));
  EXPECT_TRUE(rolled_back.changed_replications().empty());
  EXPECT_EQ(PlacedByOf(rolled_back, keyspace).after, Rf(1));
}

TEST(TopologyTest, AChangeOfReplicationChangesSomethingAndRunsAlone) {
  const Topology cluster = Cluster(5);
  ReplicationConfig simple;
  simple.strategy = ReplicationConfig::Strategy::kSimple;
  simple.replication_factor = 3;
  ReplicationConfig simple_lower = simple;
  simple_lower.replication_factor = 2;
  EXPECT_FALSE(cluster.Apply(Replicate(1, Rf(2), Rf(2))).ok());
  for (const auto& [from, to] : std::vector<std::pair<ReplicationConfig, ReplicationConfig>>{
           {Rf(3), Rf(2)}, {simple, simple_lower}, {Rf(3), simple}, {simple, Rf(3)}}) {
    EXPECT_TRUE(cluster.Apply(Replicate(1, from, to)).ok());
  }
  Entry driven_by_another = Replicate(1, Rf(1), Rf(2));
  driven_by_another.driver = 2;
  EXPECT_FALSE(cluster.Apply(driven_by_another).ok());
  const Topology begun = Must(cluster.Apply(Replicate(1, Rf(1), Rf(2))));
  const absl::StatusOr<Topology> second = begun.Apply(Begin(Operation::kDecommission, 3));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("keyspace ks's replication"), std::string::npos) << second.status();
}

TEST(StreamPlanTest, ARaisedReplicationStreamsEachNewReplicaFromEveryOwner) {
  const Topology begun = Must(Cluster(5).Apply(Replicate(1, Rf(2), Rf(3))));
  ExpectPlan(
      begun, [](const std::vector<NodeId>& natural, const std::vector<NodeId>&) { return natural; },
      PlacedBy{Rf(2), Rf(3)});
}

TEST(StreamPlanTest, ALoweredReplicationStreamsToEachOwnerThatStaysFromEachDropped) {
  const Topology begun = Must(Cluster(5).Apply(Replicate(1, Rf(3), Rf(2))));
  const PlacedBy placed_by{Rf(3), Rf(2)};
  const Placement placement(begun, placed_by, 1);
  const std::vector<Transfer> plan = PlanStreams(begun, placed_by);
  ASSERT_FALSE(plan.empty());
  for (Token token : Probes(placement)) {
    const std::vector<NodeId>& now = placement.now()->ReplicasOf(token);
    const std::vector<NodeId>& after = placement.after()->ReplicasOf(token);
    std::set<std::pair<NodeId, NodeId>> expected;
    for (NodeId to : after) {
      ASSERT_NE(std::find(now.begin(), now.end(), to), now.end()) << "an owner after that was not one";
      for (NodeId from : now) {
        if (std::find(after.begin(), after.end(), from) == after.end()) expected.insert({to, from});
      }
    }
    EXPECT_EQ(PlannedAt(plan, token), expected) << "token " << token;
    const Placement::Replicas replicas = placement.WriteReplicasOf(token);
    EXPECT_TRUE(replicas.pending.empty());
    EXPECT_EQ(replicas.dropped.size(), 1u);
    EXPECT_TRUE(replicas.also_among_after);
  }
}

// SimpleStrategy walks the ring; NetworkTopologyStrategy walks it too but
// takes distinct racks first: a range may gain an owner and lose another.
// Each new owner streams from every owner now, each owner that stays from
// each dropped one, and a write on a range that drops an owner must meet
// its level among the owners after too (LWT refused there).
TEST(StreamPlanTest, AChangeOfClassStreamsAsARaiseAndALoweringAtOnce) {
  ReplicationConfig simple;
  simple.strategy = ReplicationConfig::Strategy::kSimple;
  simple.replication_factor = 3;
  const Topology begun = Must(Cluster(6).Apply(Replicate(1, simple, Rf(3))));
  const PlacedBy placed_by{simple, Rf(3)};
  const Placement placement(begun, placed_by, 1);
  const std::vector<Transfer> plan = PlanStreams(begun, placed_by);
  size_t moved = 0;
  for (Token token : Probes(placement)) {
    const std::vector<NodeId>& now = placement.now()->ReplicasOf(token);
    const std::vector<NodeId>& after = placement.after()->ReplicasOf(token);
    auto holds = [](const std::vector<NodeId>& nodes, NodeId node) {
      return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
    };
    std::set<std::pair<NodeId, NodeId>> expected;
    for (NodeId to : after) {
      for (NodeId from : now) {
        if (!holds(now, to) || !holds(after, from)) expected.insert({to, from});
      }
    }
    EXPECT_EQ(PlannedAt(plan, token), expected) << "token " << token;
    const Placement::Replicas replicas = placement.WriteReplicasOf(token);
    EXPECT_EQ(replicas.pending.size(), replicas.dropped.size());
    EXPECT_EQ(replicas.also_among_after, !replicas.dropped.empty());
    moved += !replicas.pending.empty();
  }
  EXPECT_GT(moved, 0u) << "no range changed owners: the test shows nothing";
}

TEST(TopologyTest, TheDriverOfAnOperationIsItsNodeOrANormalMember) {
  const Topology cluster = Cluster(5);
  Entry decommission = Begin(Operation::kDecommission, 2);
  for (NodeId driver : {0u, 2u, 3u}) {
    decommission.driver = driver;
    EXPECT_EQ(Must(cluster.Apply(decommission)).move()->driver, driver);
  }
  decommission.driver = 9;
  EXPECT_NE(cluster.Apply(decommission).status().message().find("cannot drive"), std::string::npos);
  Entry remove = Begin(Operation::kRemove, 4);
  remove.driver = 4;
  EXPECT_FALSE(cluster.Apply(remove).ok());
  remove.driver = 1;
  EXPECT_EQ(Must(cluster.Apply(remove)).move()->driver, 1u);
  Entry join = Begin(Operation::kJoin, 6, NewMember(6, "r3", cluster));
  join.driver = 6;
  EXPECT_EQ(Must(cluster.Apply(join)).move()->driver, 6u);
}

TEST(TopologyLogTest, EntriesSurviveTheirRowsAndAMalformedRowIsNamed) {
  const Topology cluster = Cluster(3);
  Member fresh = NewMember(5, cluster.Find(2)->rack, cluster);
  fresh.tokens.clear();
  for (const Entry& entry : {Begin(Operation::kJoin, 4, NewMember(4, "r1", cluster)), Begin(Operation::kReplace, 5, fresh, 2),
                             Begin(Operation::kDecommission, 1), Step(Entry::Kind::kReadNew, 4),
                             Step(Entry::Kind::kFinish, 4), Step(Entry::Kind::kRollBack, 1)}) {
    const absl::StatusOr<Entry> back = EntryOfColumns(EntryColumns(entry));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(EntryColumns(*back), EntryColumns(entry));
    EXPECT_EQ(back->joining.tokens, entry.joining.tokens);
  }
  Entry driven = Begin(Operation::kDecommission, 1);
  driven.driver = 1;
  EXPECT_EQ(EntryOfColumns(EntryColumns(driven))->driver, 1u);
  std::map<std::string, std::string> columns = EntryColumns(Begin(Operation::kJoin, 4, NewMember(4, "r1", cluster)));
  columns["tokens"] = "12,x";
  EXPECT_NE(EntryOfColumns(columns).status().message().find("not a number: x"), std::string::npos);
  columns.erase("rack");
  EXPECT_NE(EntryOfColumns(columns).status().message().find("without rack"), std::string::npos);
  columns = EntryColumns(Step(Entry::Kind::kFinish, 4));
  columns["kind"] = "explode";
  EXPECT_FALSE(EntryOfColumns(columns).ok());
  // A change of replication, Simple or NetworkTopology, keeps both.
  ReplicationConfig simple;
  simple.strategy = ReplicationConfig::Strategy::kSimple;
  simple.replication_factor = 2;
  ReplicationConfig two_datacenters = Rf(1);
  two_datacenters.per_datacenter["dc2"] = 3;
  for (const auto& [from, to] : {std::pair{simple, simple}, std::pair{Rf(1), two_datacenters}}) {
    const Entry replicate = Replicate(2, from, to);
    const absl::StatusOr<Entry> back = EntryOfColumns(EntryColumns(replicate));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->replicating.from, from);
    EXPECT_EQ(back->replicating.to, to);
    EXPECT_EQ(back->replicating.keyspace_created_at, 4u);
    EXPECT_EQ(back->replicating.statement, replicate.replicating.statement);
  }
  columns = EntryColumns(Replicate(2, Rf(1), Rf(2)));
  columns["to"] = "network:dc1=x";
  EXPECT_NE(EntryOfColumns(columns).status().message().find("malformed replication"), std::string::npos);
}

TEST(TopologyLogTest, ARefusedEntryIsKeptAndChangesNothing) {
  TopologyLog log(Cluster(4));
  EXPECT_EQ(log.ParticipantsOfNext(), (std::vector<NodeId>{1, 2, 3, 4}));
  EXPECT_EQ(log.QuorumOfNext(), 3u);
  ASSERT_TRUE(log.Append(Begin(Operation::kDecommission, 2)).ok());
  // Two operators raced: the second begin was decided after the first.
  EXPECT_FALSE(log.Append(Begin(Operation::kRemove, 3)).ok());
  EXPECT_EQ(log.sequence(), 2u);
  EXPECT_EQ(log.topology().version(), 2u);
  ASSERT_TRUE(log.Append(Step(Entry::Kind::kReadNew, 2)).ok());
  EXPECT_EQ(log.ParticipantsOfNext(), (std::vector<NodeId>{1, 2, 3, 4}));  // a leaving node still decides
  ASSERT_TRUE(log.Append(Step(Entry::Kind::kFinish, 2)).ok());
  EXPECT_EQ(log.ParticipantsOfNext(), (std::vector<NodeId>{1, 3, 4}));
  EXPECT_EQ(log.QuorumOfNext(), 2u);
  EXPECT_EQ(log.topology().version(), 4u);
}

}  // namespace
}  // namespace charybdis::topology
