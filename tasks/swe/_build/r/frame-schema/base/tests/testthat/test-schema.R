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
