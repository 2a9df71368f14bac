#include "db/error_classifier.h"

#include <string>

#include "db/driver.h"
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
  EXPECT_EQ(ErrorClassName(ErrorClass::kIgnored), "ignored");
}

DbError ErrorOf(Dialect dialect, std::string code) {
  return DbError{.error_class = ErrorClassifier::Defaults(dialect).Classify(code),
                 .code = std::move(code),
                 .message = "the server's words"};
}

// The issue-17 case: a duplicate key is fatal to the classifier (nobody expects one in general),
// and ignored by a workload that asks for sysbench's set.
TEST(IgnoredErrorsTest, SysbenchsPostgreSqlSetTurnsItsCodesIntoIgnoredOnes) {
  const IgnoredErrors ignored = IgnoredErrors::SysbenchDefaults(Dialect::kPostgreSql);
  for (const char* code : {"23505", "40P01", "40001"}) {
    const DbError applied = ignored.Apply(ErrorOf(Dialect::kPostgreSql, code));
    EXPECT_EQ(applied.error_class, ErrorClass::kIgnored) << code;
    EXPECT_EQ(applied.code, code);  // counted per code
    EXPECT_EQ(applied.message, "the server's words");
  }
  EXPECT_EQ(ErrorOf(Dialect::kPostgreSql, "23505").error_class, ErrorClass::kFatal);
  // Not in sysbench's set: keep their classes (a lock timeout is retryable, a check violation
  // and a missing table fatal).
  EXPECT_EQ(ignored.Apply(ErrorOf(Dialect::kPostgreSql, "55P03")).error_class,
            ErrorClass::kRetryable);
  EXPECT_EQ(ignored.Apply(ErrorOf(Dialect::kPostgreSql, "23514")).error_class, ErrorClass::kFatal);
  EXPECT_EQ(ignored.Apply(ErrorOf(Dialect::kPostgreSql, "42P01")).error_class, ErrorClass::kFatal);
  // Exact codes: another class-23 or class-40 code is not ignored.
  EXPECT_FALSE(ignored.Ignores(ErrorOf(Dialect::kPostgreSql, "23503")));
  EXPECT_FALSE(ignored.Ignores(ErrorOf(Dialect::kPostgreSql, "40002")));
  EXPECT_FALSE(ignored.Ignores(ErrorOf(Dialect::kPostgreSql, "")));
}

TEST(IgnoredErrorsTest, SysbenchsMySqlSetIsTheDefaultOfMysqlIgnoreErrors) {
  const IgnoredErrors ignored = IgnoredErrors::SysbenchDefaults(Dialect::kMySql);
  for (const char* code : {"1213", "1020", "1205"}) {
    EXPECT_EQ(ignored.Apply(ErrorOf(Dialect::kMySql, code)).error_class, ErrorClass::kIgnored)
        << code;
  }
  // MySQL's duplicate key is not in sysbench's default list for MySQL: still fatal.
  EXPECT_EQ(ignored.Apply(ErrorOf(Dialect::kMySql, "1062")).error_class, ErrorClass::kFatal);
  EXPECT_FALSE(ignored.Ignores(ErrorOf(Dialect::kMySql, "12130")));
  // PostgreSQL's codes mean nothing on MySQL, and the noop driver ignores nothing.
  EXPECT_FALSE(ignored.Ignores(ErrorOf(Dialect::kMySql, "23505")));
  EXPECT_TRUE(IgnoredErrors::SysbenchDefaults(Dialect::kNoop).empty());
}

TEST(IgnoredErrorsTest, AConnectionErrorIsNeverIgnoredEvenWhenListed) {
  // sysbench users list 2013 in --mysql-ignore-errors to ride through restarts; here the
  // session must still reconnect, so the error keeps its class and the runner reconnects.
  const IgnoredErrors ignored({"2013", "1213"});
  const DbError lost = ErrorOf(Dialect::kMySql, "2013");
  ASSERT_EQ(lost.error_class, ErrorClass::kConnection);
  EXPECT_FALSE(ignored.Ignores(lost));
  EXPECT_EQ(ignored.Apply(lost).error_class, ErrorClass::kConnection);
  EXPECT_TRUE(ignored.Ignores(ErrorOf(Dialect::kMySql, "1213")));
}

TEST(IgnoredErrorsTest, AnEmptyListIgnoresNothing) {
  const IgnoredErrors none;
  EXPECT_TRUE(none.empty());
  for (const char* code : {"23505", "40P01", "40001"}) {
    const DbError error = ErrorOf(Dialect::kPostgreSql, code);
    EXPECT_EQ(none.Apply(error).error_class, error.error_class) << code;
  }
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
