# Rolling-window statistics over numeric vectors. A window of width k ending at
# position i covers x[(i - k + 1):i]; results have one value per complete window.

check_window <- function(x, k) {
  if (!is.numeric(x)) stop("x must be numeric")
  if (length(k) != 1 || is.na(k) || k < 1 || k != round(k)) stop("k must be a positive whole number")
  invisible(TRUE)
}

#' Apply `f` to every complete window of width `k`.
roll_apply <- function(x, k, f) {
  check_window(x, k)
  n <- length(x) - k + 1
  out <- numeric(n)
  for (i in 1:n) out[i] <- f(x[i:(i + k - 1)])
  out
}

roll_mean <- function(x, k) roll_apply(x, k, mean)
roll_sum <- function(x, k) roll_apply(x, k, sum)
roll_max <- function(x, k) roll_apply(x, k, max)
roll_min <- function(x, k) roll_apply(x, k, min)

#' Rolling mean that ignores NA values inside a window; NA when a window is all NA.
roll_mean_na <- function(x, k) {
  roll_apply(x, k, function(w) if (all(is.na(w))) NA_real_ else mean(w, na.rm = TRUE))
}

#' Exponentially weighted moving average with smoothing factor alpha in (0, 1].
ewma <- function(x, alpha) {
  if (!is.numeric(x)) stop("x must be numeric")
  if (alpha <= 0 || alpha > 1) stop("alpha must be in (0, 1]")
  out <- numeric(length(x))
  for (i in seq_along(x)) {
    out[i] <- if (i == 1) x[1] else alpha * x[i] + (1 - alpha) * out[i - 1]
  }
  out
}
