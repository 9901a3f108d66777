#include "state/durable_store.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>

#include "store_file_test_support.h"

namespace switchyard::state {
namespace {

class DurableStoreTest : public StoreFileTest {};

constexpr std::int64_t kNow = 1'800'000'000'000;

StoreBatch SomeOfEverything() {
    StoreBatch batch;
    batch.keys_added.push_back({"k1", R"({"name":"k1","key_sha256":"ab"})", kNow});
    batch.spend.push_back({"ab", "2027-01", 1.25, 300, 4});
    batch.marks.push_back({"dep-a", "disabled", kNow + 60'000, "spend cap"});
    batch.marks.push_back({"dep-b", "cooling", kNow + 5'000, ""});
    batch.idempotency.push_back(
        {"idem", "tenant", "fp", true, std::string("a\0b", 3), kNow + 1000});
    batch.idempotency.push_back({"idem2", "tenant", "fp2", false, {}, kNow + 1000});
    return batch;
}

TEST_F(DurableStoreTest, WhatIsWrittenIsReadBackAfterReopening) {
    {
        DurableStore store(path_, 1 << 20);
        store.Write(SomeOfEverything(), kNow);
    }
    DurableStore store(path_, 1 << 20);
    const StoreContents c = store.Load(kNow);
    ASSERT_EQ(c.keys.size(), 1u);
    EXPECT_EQ(c.keys[0].body, R"({"name":"k1","key_sha256":"ab"})");
    ASSERT_EQ(c.spend.size(), 1u);
    EXPECT_DOUBLE_EQ(c.spend[0].spent, 1.25);
    EXPECT_EQ(c.spend[0].tokens, 300);
    EXPECT_EQ(c.spend[0].requests, 4);
    ASSERT_EQ(c.marks.size(), 2u);
    ASSERT_EQ(c.idempotency.size(), 2u);
    EXPECT_EQ(c.idempotency[0].answer, std::string("a\0b", 3));  // binary safe
    EXPECT_FALSE(c.idempotency[1].has_answer);
}

TEST_F(DurableStoreTest, SpendIsTotalsSoAWriteRepeatedCountsOnce) {
    DurableStore store(path_, 1 << 20);
    StoreBatch batch;
    batch.spend.push_back({"ab", "2027-01", 1.0, 10, 1});
    batch.spend.push_back({"ab", "2027-01", 2.0, 20, 2});  // later totals of the same month
    store.Write(batch, kNow);
    store.Write(batch, kNow);
    const StoreContents c = store.Load(kNow);
    ASSERT_EQ(c.spend.size(), 1u);
    EXPECT_DOUBLE_EQ(c.spend[0].spent, 2.0);
}

TEST_F(DurableStoreTest, MarksAreAppliedInOrderAndExpire) {
    DurableStore store(path_, 1 << 20);
    StoreBatch batch;
    batch.marks.push_back({"d", "cooling", kNow + 10'000, ""});
    batch.marks.push_back({"d", "", 0, ""});  // re-enabled: every mark cleared
    batch.marks.push_back({"d", "rate_limited", kNow + 2'000, ""});
    batch.marks.push_back({"d", "rate_limited", kNow + 1'000, ""});  // never shortened
    store.Write(batch, kNow);
    StoreContents c = store.Load(kNow);
    ASSERT_EQ(c.marks.size(), 1u);
    EXPECT_EQ(c.marks[0].kind, "rate_limited");
    EXPECT_EQ(c.marks[0].until_ms, kNow + 2'000);
    EXPECT_TRUE(store.Load(kNow + 2'000).marks.empty());  // ended
    StoreBatch clear;
    clear.marks.push_back({"d", "rate_limited", 0, ""});
    store.Write(clear, kNow);
    EXPECT_TRUE(store.Load(kNow).marks.empty());
}

TEST_F(DurableStoreTest, KeptAnswersAreBoundedDroppingThoseThatExpireFirst) {
    DurableStore store(path_, 3 * 1024);
    for (int i = 0; i < 5; ++i) {
        StoreBatch batch;
        batch.idempotency.push_back(
            {"key" + std::to_string(i), "t", "fp", true, std::string(700, 'x'), kNow + 10'000 + i});
        store.Write(batch, kNow);
    }
    const StoreContents c = store.Load(kNow);
    ASSERT_EQ(c.idempotency.size(), 3u);  // 3 x (700 + 4 + 256) fit in 3 KiB, 4 do not
    EXPECT_EQ(c.idempotency[0].key, "key2");
    EXPECT_TRUE(store.Load(kNow + 20'000).idempotency.empty());  // expired
}

TEST_F(DurableStoreTest, ASecondHolderIsRefused) {
    DurableStore first(path_, 1 << 20);
    try {
        DurableStore second(path_, 1 << 20);
        FAIL() << "a second store on the same file opened";
    } catch (const StoreError& e) {
        EXPECT_NE(std::string(e.what()).find("in use by another process"), std::string::npos)
            << e.what();
    }
}

TEST_F(DurableStoreTest, AFileThatIsNotAStoreIsRefusedAndLeftAlone) {
    {
        std::ofstream out(path_, std::ios::binary);
        out << std::string(4096, 'z');
    }
    EXPECT_THROW(DurableStore(path_, 1 << 20), StoreError);
    EXPECT_EQ(std::filesystem::file_size(path_), 4096u);
}

TEST_F(DurableStoreTest, ExportAndImportRoundTrip) {
    StoreContents before;
    {
        DurableStore store(path_, 1 << 20);
        store.Write(SomeOfEverything(), kNow);
        before = store.Load(kNow);
    }
    const boost::json::object exported = ExportContents(before, kNow);
    const std::string text = boost::json::serialize(exported);
    const StoreContents parsed = ImportContents(boost::json::parse(text));
    const std::string other = dir_ + "/other.db";
    DurableStore target(other, 1 << 20);
    target.Write(SomeOfEverything(), kNow);  // replaced, not merged
    target.Replace(parsed);
    const StoreContents after = target.Load(kNow);
    EXPECT_EQ(boost::json::serialize(ExportContents(after, kNow)), text);
    EXPECT_THROW(ImportContents(boost::json::parse(R"({"keys":[]})")), StoreError);
    EXPECT_THROW(
        ImportContents(boost::json::parse(R"({"format":"switchyard-state","version":99})")),
        StoreError);
    EXPECT_THROW(ImportContents(boost::json::parse(
                     R"({"format":"switchyard-state","version":1,"spend":[{"month":"x"}]})")),
                 StoreError);
}

}  // namespace
}  // namespace switchyard::state
