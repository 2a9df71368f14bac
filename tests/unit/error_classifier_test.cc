#include "common/db/error_classifier.h"

#include <string>

#include "common/db/driver.h"
#include "gtest/gtest.h"

namespace dbload::db {
namespace {

TEST(ErrorClassifierTest, PostgreSqlDefaults) {
  const ErrorClassifier classifier = ErrorClassifier::Defaults(Dialect::kPostgreSql);
  EXPECT_EQ(classifier.Classify("40001"), ErrorClass::kRetryable);  // serialization_failure
  EXPECT_EQ(classifier.Classify("40P01"), ErrorClass::kRetryable);  // deadlock_detected
  EXPECT_EQ(classifier.Classify("55P03"), ErrorClass::kRetryable);  // lock_not_available
  EXPECT_EQ(classifier.Classify("08006"), ErrorClass::kConnection);
  EXPECT_EQ(classifier.Classify("08P01"), ErrorClass::kConnection);  // the "08" prefix
  EXPECT_EQ(classifier.Classify("57P01"), ErrorClass::kConnection);
  EXPECT_EQ(classifier.Classify("53300"), ErrorClass::kConnection);
  EXPECT_EQ(classifier.Classify("42601"), ErrorClass::kFatal);  // syntax_error
  EXPECT_EQ(classifier.Classify("42P01"), ErrorClass::kFatal);  // undefined_table
  EXPECT_EQ(classifier.Classify("40002"), ErrorClass::kFatal);  // not a listed class-40 code
  EXPECT_EQ(classifier.Classify("57P04"), ErrorClass::kFatal);
}

TEST(ErrorClassifierTest, MySqlDefaults) {
  const ErrorClassifier classifier = ErrorClassifier::Defaults(Dialect::kMySql);
  EXPECT_EQ(classifier.Classify("1213"), ErrorClass::kRetryable);  // deadlock
  EXPECT_EQ(classifier.Classify("1205"), ErrorClass::kRetryable);  // lock wait timeout
  for (const char* code : {"1040", "1053", "1927", "2002", "2003", "2006", "2013", "2055"}) {
    EXPECT_EQ(classifier.Classify(code), ErrorClass::kConnection) << code;
  }
  EXPECT_EQ(classifier.Classify("1064"), ErrorClass::kFatal);  // syntax
  EXPECT_EQ(classifier.Classify("1146"), ErrorClass::kFatal);  // no such table
  EXPECT_EQ(classifier.Classify("121"), ErrorClass::kFatal);   // a prefix of a rule is no match
}

TEST(ErrorClassifierTest, UnknownAndEmptyCodesAreFatal) {
  for (Dialect dialect : {Dialect::kPostgreSql, Dialect::kMySql, Dialect::kNoop}) {
    const ErrorClassifier classifier = ErrorClassifier::Defaults(dialect);
    EXPECT_EQ(classifier.Classify(""), ErrorClass::kFatal);
    EXPECT_EQ(classifier.Classify("XX000"), ErrorClass::kFatal);
    EXPECT_EQ(classifier.Classify("99999"), ErrorClass::kFatal);
  }
}

TEST(ErrorClassifierTest, ExactCodeWinsThenTheLongestPrefix) {
  ErrorClassifier classifier;
  classifier.Set("08*", ErrorClass::kConnection);
  classifier.Set("080*", ErrorClass::kRetryable);
  classifier.Set("08006", ErrorClass::kFatal);
  EXPECT_EQ(classifier.Classify("08P01"), ErrorClass::kConnection);
  EXPECT_EQ(classifier.Classify("08001"), ErrorClass::kRetryable);
  EXPECT_EQ(classifier.Classify("08006"), ErrorClass::kFatal);
  EXPECT_EQ(classifier.Classify("0"), ErrorClass::kFatal);
}

TEST(ErrorClassifierTest, CodesWithoutStarMatchOnlyExactly) {
  const ErrorClassifier classifier = ErrorClassifier::Defaults(Dialect::kMySql);
  EXPECT_EQ(classifier.Classify("1213"), ErrorClass::kRetryable);
  EXPECT_EQ(classifier.Classify("12130"), ErrorClass::kFatal);  // not a deadlock
}

TEST(ErrorClassifierTest, OverridesReplaceDefaults) {
  ErrorClassifier classifier = ErrorClassifier::Defaults(Dialect::kPostgreSql);
  classifier.Set("40001", ErrorClass::kFatal);  // a plan that wants serialization failures fatal
  classifier.Set("23505", ErrorClass::kRetryable);  // and unique violations retried
  EXPECT_EQ(classifier.Classify("40001"), ErrorClass::kFatal);
  EXPECT_EQ(classifier.Classify("23505"), ErrorClass::kRetryable);
  EXPECT_EQ(classifier.Classify("40P01"), ErrorClass::kRetryable);  // others untouched
  classifier.Set("08*", ErrorClass::kRetryable);
  EXPECT_EQ(classifier.Classify("08006"), ErrorClass::kRetryable);
}

TEST(ErrorClassifierTest, NoopHasNoRules) {
  const ErrorClassifier classifier = ErrorClassifier::Defaults(Dialect::kNoop);
  EXPECT_EQ(classifier.Classify("40001"), ErrorClass::kFatal);
  EXPECT_EQ(classifier.Classify("2006"), ErrorClass::kFatal);
}

TEST(DriverNamesTest, DialectAndErrorClassNames) {
  EXPECT_EQ(DialectName(Dialect::kPostgreSql), "postgresql");
  EXPECT_EQ(DialectName(Dialect::kMySql), "mysql");
  EXPECT_EQ(DialectName(Dialect::kNoop), "noop");
  EXPECT_EQ(ErrorClassName(ErrorClass::kRetryable), "retryable");
  EXPECT_EQ(ErrorClassName(ErrorClass::kConnection), "connection");
  EXPECT_EQ(ErrorClassName(ErrorClass::kFatal), "fatal");
}

TEST(RedactTest, ReplacesEveryOccurrence) {
  EXPECT_EQ(Redact("password=s3cret host=x s3cret", "s3cret"),
            "password=********** host=x **********");
  EXPECT_EQ(Redact("s3crets3cret", "s3cret"), "********************");
  EXPECT_EQ(Redact("nothing here", "s3cret"), "nothing here");
  EXPECT_EQ(Redact("an empty secret changes nothing", ""), "an empty secret changes nothing");
  // A secret made of the mask character itself must not loop forever.
  EXPECT_EQ(Redact("a*b", "*"), "a**********b");
}

}  // namespace
}  // namespace dbload::db
