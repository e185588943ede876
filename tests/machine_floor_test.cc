#include "node/bench/machine_floor.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace charybdis::node {
namespace {

std::string FreshDirectory(const std::string& name) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  return path;
}

TEST(MachineFloorTest, PutAndLwtFloorsAddTheirRoundTripsToTheSync) {
  MachineFloor floor;
  floor.loopback_round_trip_us = 50;
  floor.fdatasync_us = 300;
  EXPECT_EQ(floor.quorum_put_us(), 400);  // client and replica round trips, then the sync
  EXPECT_EQ(floor.lwt_us(), 450);         // and the prepare's round trip before it
}

TEST(MachineFloorTest, LoopbackRoundTripsAreTimed) {
  auto round_trip = MeasureLoopbackRoundTripUs(200);
  ASSERT_TRUE(round_trip.ok()) << round_trip.status();
  EXPECT_GT(*round_trip, 0);
  EXPECT_LT(*round_trip, 1'000'000);  // a loopback ping-pong, not a timeout
  EXPECT_EQ(MeasureLoopbackRoundTripUs(0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MachineFloorTest, SyncsAreTimedAndTheirFilesRemoved) {
  const std::string directory = FreshDirectory("syncs");
  auto sync = MeasureFdatasyncUs(directory, 3, 20);
  ASSERT_TRUE(sync.ok()) << sync.status();
  EXPECT_GT(*sync, 0);
  EXPECT_TRUE(std::filesystem::is_empty(directory));
}

TEST(MachineFloorTest, BadSyncArgumentsAreRefused) {
  const std::string directory = FreshDirectory("refused");
  EXPECT_EQ(MeasureFdatasyncUs(directory, 0, 20).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureFdatasyncUs(directory, 3, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureFdatasyncUs(directory + "/missing", 3, 20).status().code(), absl::StatusCode::kNotFound);
  std::ofstream(directory + "/file") << "not a directory";
  EXPECT_EQ(MeasureFdatasyncUs(directory + "/file", 3, 20).status().code(), absl::StatusCode::kNotFound);
}

TEST(MachineFloorTest, AFileThatCannotBeCreatedIsAnError) {
  const std::string directory = FreshDirectory("occupied");
  // A directory where a writer's file would go: open fails, the error names it.
  std::filesystem::create_directories(directory + "/fdatasync-1");
  auto sync = MeasureFdatasyncUs(directory, 3, 5);
  ASSERT_FALSE(sync.ok());
  EXPECT_NE(sync.status().message().find("fdatasync-1"), std::string::npos) << sync.status();
}

}  // namespace
}  // namespace charybdis::node
