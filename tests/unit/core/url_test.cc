#include "core/url.h"

#include <gtest/gtest.h>

namespace switchyard::core {
namespace url_test {

TEST(BaseUrlTest, ParsesSchemeHostPortAndPrefix) {
    std::string error;
    auto url = ParseBaseUrl("https://api.openai.com/v1/", error);
    ASSERT_TRUE(url) << error;
    EXPECT_TRUE(url->tls);
    EXPECT_EQ(url->host, "api.openai.com");
    EXPECT_EQ(url->port, 443);
    EXPECT_EQ(url->path_prefix, "/v1");
    EXPECT_EQ(url->HostHeader(), "api.openai.com");

    url = ParseBaseUrl("http://127.0.0.1:4010", error);
    ASSERT_TRUE(url) << error;
    EXPECT_FALSE(url->tls);
    EXPECT_EQ(url->port, 4010);
    EXPECT_EQ(url->path_prefix, "");
    EXPECT_EQ(url->HostHeader(), "127.0.0.1:4010");

    url = ParseBaseUrl("http://[::1]:8080/x", error);
    ASSERT_TRUE(url) << error;
    EXPECT_EQ(url->host, "::1");
    EXPECT_EQ(url->port, 8080);
}

TEST(BaseUrlTest, RejectsWhatItCannotConnectTo) {
    std::string error;
    EXPECT_FALSE(ParseBaseUrl("ftp://x", error));
    EXPECT_FALSE(ParseBaseUrl("http://", error));
    EXPECT_FALSE(ParseBaseUrl("http://host:99999", error));
    EXPECT_FALSE(ParseBaseUrl("http://host:0", error));
    EXPECT_FALSE(ParseBaseUrl("http://user:pw@host", error));
    EXPECT_FALSE(ParseBaseUrl("http://host/v1?x=1", error));
    EXPECT_FALSE(error.empty());
}

TEST(HostPortTest, ParsesListenAddresses) {
    std::string host;
    std::uint16_t port = 1;
    ASSERT_TRUE(ParseHostPort("127.0.0.1:0", host, port));
    EXPECT_EQ(host, "127.0.0.1");
    EXPECT_EQ(port, 0);
    ASSERT_TRUE(ParseHostPort(":4000", host, port));
    EXPECT_EQ(host, "0.0.0.0");
    EXPECT_FALSE(ParseHostPort("4000", host, port));
    EXPECT_FALSE(ParseHostPort("h:x", host, port));
}

}  // namespace url_test
}  // namespace switchyard::core
