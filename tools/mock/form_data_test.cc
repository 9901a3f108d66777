#include "form_data.h"

#include <gtest/gtest.h>

namespace switchyard::mock {
namespace {

// A body as curl -F sends it: a file part and a field.
constexpr std::string_view kUpload =
    "--XyZ\r\n"
    "Content-Disposition: form-data; name=\"purpose\"\r\n"
    "\r\n"
    "batch\r\n"
    "--XyZ\r\n"
    "Content-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\n"
    "Content-Type: application/octet-stream\r\n"
    "\r\n"
    "{\"a\":1}\n{\"b\":2}\n\r\n"
    "--XyZ--\r\n";

TEST(ParseMultipart, SplitsFieldsAndFiles) {
    const ParsedForm form = ParseMultipart("multipart/form-data; boundary=XyZ", kUpload);
    ASSERT_TRUE(form.ok()) << form.error;
    ASSERT_EQ(form.parts.size(), 2u);
    const FormPart* purpose = form.Find("purpose");
    ASSERT_NE(purpose, nullptr);
    EXPECT_EQ(purpose->data, "batch");
    EXPECT_FALSE(purpose->filename);
    EXPECT_EQ(purpose->content_type, "");
    const FormPart* file = form.Find("file");
    ASSERT_NE(file, nullptr);
    EXPECT_EQ(file->filename, "in.jsonl");
    EXPECT_EQ(file->content_type, "application/octet-stream");
    // The CRLF before the next boundary belongs to the delimiter, not to the data.
    EXPECT_EQ(file->data, "{\"a\":1}\n{\"b\":2}\n");
    EXPECT_EQ(form.Find("other"), nullptr);
}

TEST(ParseMultipart, QuotedBoundaryPreambleEpilogueAndHeaderCase) {
    const std::string body =
        "preamble to ignore\r\n"
        "--a:b c\r\n"
        "content-disposition: FORM-DATA; filename=\"x;\\\"y\\\".txt\"; name=file\r\n"
        "\r\n"
        "--a:b not a delimiter: no CRLF before it\r\n"
        "--a:b c--\r\n"
        "epilogue";
    const ParsedForm form =
        ParseMultipart("Multipart/Form-Data; charset=utf-8; BOUNDARY=\"a:b c\"", body);
    ASSERT_TRUE(form.ok()) << form.error;
    ASSERT_EQ(form.parts.size(), 1u);
    EXPECT_EQ(form.parts[0].name, "file");
    EXPECT_EQ(form.parts[0].filename, "x;\"y\".txt");
    EXPECT_EQ(form.parts[0].data, "--a:b not a delimiter: no CRLF before it");
}

TEST(ParseMultipart, EmptyDataAndExtendedFilename) {
    const std::string body =
        "--b\r\n"
        "Content-Disposition: form-data; name=\"file\"; filename*=UTF-8''na%C3%AFve.jsonl\r\n"
        "\r\n"
        "\r\n"
        "--b--";
    const ParsedForm form = ParseMultipart("multipart/form-data; boundary=b", body);
    ASSERT_TRUE(form.ok()) << form.error;
    ASSERT_EQ(form.parts.size(), 1u);
    EXPECT_EQ(form.parts[0].filename, "na\xC3\xAFve.jsonl");
    EXPECT_EQ(form.parts[0].data, "");
}

TEST(ParseMultipart, RejectsWhatIsNoForm) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {"application/json", "must be multipart/form-data"},
        {"multipart/form-data", "needs a boundary"},
        {"multipart/form-data; boundary=\"\"", "needs a boundary"},
    };
    for (const auto& [content_type, expected] : cases) {
        const ParsedForm form = ParseMultipart(content_type, kUpload);
        EXPECT_NE(form.error.find(expected), std::string::npos)
            << content_type << ": " << form.error;
    }
    const auto error = [](std::string_view body) {
        return ParseMultipart("multipart/form-data; boundary=b", body).error;
    };
    EXPECT_EQ(error("no delimiter at all"), "the body has no boundary line");
    EXPECT_EQ(error("--b\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\ndata"),
              "the body ends before its closing boundary");
    EXPECT_EQ(error("--b\r\nContent-Disposition: form-data; name=\"f\"\r\n"),
              "a part's headers are not ended by an empty line");
    EXPECT_EQ(error("--bx\r\n\r\n\r\n--b--"), "a boundary line is not followed by CRLF");
    EXPECT_EQ(error("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--"),
              "a part has no Content-Disposition header");
    EXPECT_EQ(error("--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--"),
              "a part's Content-Disposition has no name");
    EXPECT_EQ(error("--b\r\nContent-Disposition: attachment; name=x\r\n\r\nx\r\n--b--"),
              "a part's Content-Disposition is 'attachment; name=x', not form-data");
    EXPECT_EQ(error("--b\r\nno colon\r\n\r\nx\r\n--b--"), "malformed part header 'no colon'");
}

TEST(QueryParameter, FindsAndDecodesValues) {
    const std::string_view target = "/v1/batches?limit=5&after=batch_1&q=a%20b+c&flag&limit=9";
    EXPECT_EQ(QueryParameter(target, "limit"), "5");  // The first occurrence.
    EXPECT_EQ(QueryParameter(target, "after"), "batch_1");
    EXPECT_EQ(QueryParameter(target, "q"), "a b c");
    EXPECT_EQ(QueryParameter(target, "flag"), "");
    EXPECT_EQ(QueryParameter(target, "before"), std::nullopt);
    EXPECT_EQ(QueryParameter("/v1/batches", "limit"), std::nullopt);
    EXPECT_EQ(QueryParameter("/p?x=%zz%4", "x"), "%zz%4");  // Malformed escapes stay as sent.
}

}  // namespace
}  // namespace switchyard::mock
