people <- data.frame(name = c("ada", "bob"), age = c(36L, 41L), stringsAsFactors = FALSE)

test_that("a conforming frame has no problems", {
  expect_true(conforms(people, schema(name = "character", age = "integer")))
})

test_that("missing and mistyped columns are reported", {
  p <- validate(people, schema(name = "character", age = "numeric", email = "character"))
  expect_equal(p$column, c("age", "email"))
  expect_equal(p$problem, c("expected numeric, found integer", "missing column"))
})

test_that("extra columns are allowed unless asked", {
  s <- schema(name = "character")
  expect_true(conforms(people, s))
  expect_false(conforms(people, s, allow_extra = FALSE))
})

test_that("coerce() converts to declared types", {
  df <- data.frame(n = c("1", "2"), d = c("2026-03-01", "2026-03-02"), stringsAsFactors = FALSE)
  out <- coerce(df, schema(n = "integer", d = "Date"))
  expect_identical(out$n, c(1L, 2L))
  expect_s3_class(out$d, "Date")
  expect_true(conforms(out, schema(n = "integer", d = "Date")))
})

test_that("schema_diff() lists differing columns", {
  a <- data.frame(x = 1:2, y = c("a", "b"))
  b <- data.frame(x = c(1.5, 2), z = TRUE)
  d <- schema_diff(a, b)
  expect_equal(d$column, c("x", "y", "z"))
  expect_equal(d$left, c("integer", "character", NA))
  expect_equal(d$right, c("numeric", NA, "logical"))
})

test_that("coerced date-time columns conform to their schema", {
  df <- data.frame(at = c("2026-03-01 08:00:00", "2026-03-01 09:30:00"), n = 1:2, stringsAsFactors = FALSE)
  s <- schema(at = "POSIXct", n = "integer")
  out <- coerce(df, s)
  expect_true(conforms(out, s))
  expect_equal(nrow(schema_diff(out, out)), 0)
})
