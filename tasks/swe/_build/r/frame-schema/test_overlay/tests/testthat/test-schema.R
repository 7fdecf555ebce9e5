people <- data.frame(
  name = c("ada", "bob"),
  age = c(36L, 41L),
  score = c(9.5, 7.25),
  active = c(TRUE, FALSE),
  stringsAsFactors = FALSE
)

test_that("schema() builds a typed schema", {
  s <- schema(name = "character", age = "integer")
  expect_s3_class(s, "schema")
  expect_equal(unclass(s), c(name = "character", age = "integer"))
})

test_that("schema() rejects unknown types and unnamed entries", {
  expect_error(schema(a = "float"), "unknown type")
  expect_error(schema("numeric"), "column name")
})

test_that("infer_schema() reads basic column types", {
  expect_equal(unclass(infer_schema(people)),
               c(name = "character", age = "integer", score = "numeric", active = "logical"))
})

test_that("infer_schema() handles factors and dates", {
  df <- data.frame(f = factor(c("a", "b")), d = as.Date(c("2026-01-01", "2026-01-02")))
  expect_equal(unclass(infer_schema(df)), c(f = "factor", d = "Date"))
})

test_that("infer_schema() of a frame without columns is empty", {
  expect_length(infer_schema(data.frame()), 0)
})

test_that("infer_schema() handles date-time columns", {
  df <- data.frame(id = 1:2, at = as.POSIXct(c("2026-01-01 10:00:00", "2026-01-01 11:00:00"), tz = "UTC"))
  expect_equal(unclass(infer_schema(df)), c(id = "integer", at = "POSIXct"))
})

test_that("infer_schema() of a single date-time column", {
  df <- data.frame(at = as.POSIXct("2026-01-01 10:00:00", tz = "UTC"))
  expect_equal(unclass(infer_schema(df)), c(at = "POSIXct"))
})
