test_that("crossings finds upward crossings", {
  expect_equal(crossings(c(1, 3, 2, 5, 1), 2), c(2L, 4L))
  expect_equal(crossings(5, 1), integer(0))
})

test_that("roll_zscore compares with the previous window", {
  z <- roll_zscore(c(1, 2, 3, 10), 3)
  expect_equal(z[1:3], rep(NA_real_, 3))
  expect_equal(z[4], (10 - 2) / 1)
})

test_that("series_summary of a long series", {
  s <- series_summary(c(1, 5, 3, 7), 2)
  expect_equal(s$n, 4)
  expect_equal(s$peak, 5)
})
