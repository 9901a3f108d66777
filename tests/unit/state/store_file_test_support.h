#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace switchyard::state {

// A test with a directory of its own for a store file (`path_`), removed afterwards.
class StoreFileTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char pattern[] = "/tmp/switchyard-store-XXXXXX";
        ASSERT_NE(::mkdtemp(pattern), nullptr);
        dir_ = pattern;
        path_ = dir_ + "/state.db";
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string dir_;
    std::string path_;
};

}  // namespace switchyard::state
