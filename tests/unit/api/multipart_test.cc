#include "api/multipart.h"

#include <gtest/gtest.h>

namespace switchyard::api {
namespace {

TEST(MultipartTest, ReadsFieldsAndAFileAsTheSdksSendThem) {
    const std::string body =
        "--openai-abc\r\n"
        "Content-Disposition: form-data; name=\"purpose\"\r\n\r\n"
        "batch\r\n"
        "--openai-abc\r\n"
        "Content-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n"
        "{\"a\":1}\r\n{\"b\":2}\n\r\n"
        "--openai-abc--\r\n";
    std::string error;
    const auto parts = ParseMultipart("multipart/form-data; boundary=openai-abc", body, error);
    ASSERT_TRUE(parts) << error;
    ASSERT_EQ(parts->size(), 2u);
    EXPECT_EQ((*parts)[0].name, "purpose");
    EXPECT_FALSE((*parts)[0].filename);
    EXPECT_EQ((*parts)[0].data, "batch");
    EXPECT_EQ((*parts)[1].name, "file");
    EXPECT_EQ((*parts)[1].filename, "in.jsonl");
    EXPECT_EQ((*parts)[1].content_type, "application/octet-stream");
    // CRLFs inside the file stay: only the one before the delimiter belongs to the framing.
    EXPECT_EQ((*parts)[1].data, "{\"a\":1}\r\n{\"b\":2}\n");
}

TEST(MultipartTest, AQuotedBoundaryAndAPreamble) {
    const std::string body =
        "preamble\r\n--b c\r\nContent-Disposition: form-data; name=x\r\n\r\n1\r\n--b c--";
    std::string error;
    const auto parts =
        ParseMultipart("Multipart/Form-Data; charset=utf-8; boundary=\"b c\"", body, error);
    ASSERT_TRUE(parts) << error;
    ASSERT_EQ(parts->size(), 1u);
    EXPECT_EQ((*parts)[0].name, "x");
    EXPECT_EQ((*parts)[0].data, "1");
}

TEST(MultipartTest, RefusesWhatIsNotMultipart) {
    std::string error;
    EXPECT_FALSE(ParseMultipart("application/json", "{}", error));
    EXPECT_NE(error.find("multipart/form-data"), std::string::npos);
    EXPECT_FALSE(ParseMultipart("multipart/form-data", "x", error));
    EXPECT_NE(error.find("boundary"), std::string::npos);
    EXPECT_FALSE(ParseMultipart("multipart/form-data; boundary=z", "no delimiter", error));
    // A part that never ends, and one without a name.
    EXPECT_FALSE(ParseMultipart("multipart/form-data; boundary=z",
                                "--z\r\nContent-Disposition: form-data; name=a\r\n\r\nxx", error));
    EXPECT_NE(error.find("does not end"), std::string::npos);
    EXPECT_FALSE(ParseMultipart("multipart/form-data; boundary=z",
                                "--z\r\nContent-Type: text/plain\r\n\r\nxx\r\n--z--", error));
    EXPECT_NE(error.find("name"), std::string::npos);
}

}  // namespace
}  // namespace switchyard::api
