#include "api/answer_shape.h"

#include <gtest/gtest.h>

namespace switchyard::api {
namespace answer_shape_test {

TEST(AnswerShapeTest, EachApiAnswerIsKnownByItsContentArray) {
    EXPECT_EQ(ShapeOfAnswer(R"({"id":"c","choices":[]})", Wire::kOpenAi, Endpoint::kChat),
              AnswerShape::kAnswer);
    EXPECT_EQ(
        ShapeOfAnswer(R"({"type":"message","content":[]})", Wire::kAnthropic, Endpoint::kChat),
        AnswerShape::kAnswer);
    // A Responses object carries `"error": null`.
    EXPECT_EQ(ShapeOfAnswer(R"({"object":"response","error":null,"output":[]})", Wire::kResponses,
                            Endpoint::kChat),
              AnswerShape::kAnswer);
    EXPECT_EQ(ShapeOfAnswer(R"({"object":"list","data":[]})", Wire::kOpenAi, Endpoint::kEmbeddings),
              AnswerShape::kAnswer);
}

TEST(AnswerShapeTest, AnErrorOrAnotherShapeSentWith200IsNoAnswer) {
    EXPECT_EQ(ShapeOfAnswer(R"({"error":{"message":"boom","type":"server_error"}})", Wire::kOpenAi,
                            Endpoint::kChat),
              AnswerShape::kError);
    EXPECT_EQ(ShapeOfAnswer(R"({"type":"error","error":{"type":"api_error","message":"x"}})",
                            Wire::kAnthropic, Endpoint::kChat),
              AnswerShape::kError);
    EXPECT_EQ(ShapeOfAnswer(R"({"object":"list","data":[]})", Wire::kOpenAi, Endpoint::kChat),
              AnswerShape::kWrongShape);
    EXPECT_EQ(ShapeOfAnswer(R"({"type":"completion","completion":"hi"})", Wire::kAnthropic,
                            Endpoint::kChat),
              AnswerShape::kWrongShape);
    EXPECT_EQ(ShapeOfAnswer(R"({"choices":{}})", Wire::kOpenAi, Endpoint::kChat),
              AnswerShape::kWrongShape);
    EXPECT_EQ(ShapeOfAnswer(R"({"choices":[)", Wire::kOpenAi, Endpoint::kChat),
              AnswerShape::kNotJson);
    EXPECT_EQ(ShapeOfAnswer("", Wire::kOpenAi, Endpoint::kChat), AnswerShape::kNotJson);
}

}  // namespace answer_shape_test
}  // namespace switchyard::api
