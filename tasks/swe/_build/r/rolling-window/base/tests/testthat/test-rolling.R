test_that("roll_mean over complete windows", {
  expect_equal(roll_mean(c(1, 2, 3, 4, 5), 2), c(1.5, 2.5, 3.5, 4.5))
})

test_that("roll_sum, roll_max and roll_min", {
  x <- c(3, 1, 4, 1, 5, 9)
  expect_equal(roll_sum(x, 3), c(8, 6, 10, 15))
  expect_equal(roll_max(x, 3), c(4, 4, 5, 9))
  expect_equal(roll_min(x, 3), c(1, 1, 1, 1))
})

test_that("a window as wide as the series gives one value", {
  expect_equal(roll_mean(c(2, 4, 6), 3), 4)
})

test_that("window width is validated", {
  expect_error(roll_mean(1:3, 0), "positive whole number")
  expect_error(roll_mean(1:3, 1.5), "positive whole number")
  expect_error(roll_mean("a", 1), "numeric")
})

test_that("roll_mean_na skips missing values", {
  expect_equal(roll_mean_na(c(1, NA, 3, NA, NA), 2), c(1, 3, 3, NA))
})

test_that("ewma smooths", {
  expect_equal(ewma(c(10, 20, 20), 0.5), c(10, 15, 17.5))
  expect_error(ewma(1:3, 0), "alpha")
})
