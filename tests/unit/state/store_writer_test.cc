#include "state/store_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "core/clock.h"
#include "store_file_test_support.h"

namespace switchyard::state {
namespace {

class StoreWriterTest : public StoreFileTest {
  protected:
    core::RealClock clock_;
    observe::Metrics metrics_{1};
};

TEST_F(StoreWriterTest, AnUrgentWriteIsOnDiskWhenItsCallbackRunsAndTheRestAtStop) {
    std::atomic<int> collected{0};
    {
        StoreWriter writer(std::make_unique<DurableStore>(path_, 1 << 20), metrics_, clock_,
                           std::chrono::hours(1));  // no periodic write during the test
        writer.Start([&](StoreBatch& batch, bool failed) {
            EXPECT_FALSE(failed);
            if (collected++ == 0) batch.spend.push_back({"ab", "2027-01", 3.5, 7, 1});
        });
        StoreBatch later;
        later.marks.push_back({"d", "cooling", std::int64_t{1} << 50, ""});
        writer.Enqueue(std::move(later));
        std::promise<bool> written;
        StoreBatch now;
        now.keys_added.push_back({"k", "{}", 1});
        writer.WriteNow(std::move(now), [&](bool ok) { written.set_value(ok); });
        EXPECT_TRUE(written.get_future().get());
        // The urgent write took what was queued and collected with it.
        std::promise<StoreContents> read;
        writer.Visit([&](DurableStore& store) { read.set_value(store.Load(0)); });
        const StoreContents c = read.get_future().get();
        EXPECT_EQ(c.keys.size(), 1u);
        EXPECT_EQ(c.marks.size(), 1u);
        EXPECT_EQ(c.spend.size(), 1u);
        StoreBatch last;
        last.keys_removed.push_back("k");
        writer.Enqueue(std::move(last));
        writer.Stop();  // writes what is left
    }
    DurableStore store(path_, 1 << 20);
    const StoreContents c = store.Load(0);
    EXPECT_TRUE(c.keys.empty());
    EXPECT_EQ(c.spend.size(), 1u);
    EXPECT_GE(collected.load(), 2);
    EXPECT_NE(metrics_.Render().find("switchyard_state_store_up 1"), std::string::npos);
}

}  // namespace
}  // namespace switchyard::state
