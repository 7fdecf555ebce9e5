#' Positions where the series crosses above `level` (x[i-1] <= level < x[i]).
crossings <- function(x, level) {
  if (length(x) < 2) return(integer(0))
  which(x[-length(x)] <= level & x[-1] > level) + 1L
}

#' Rolling z-scores: how far each value is from the mean of the previous `k` values,
#' in standard deviations. The first k positions have no history and are NA.
roll_zscore <- function(x, k) {
  check_window(x, k)
  out <- rep(NA_real_, length(x))
  if (length(x) <= k) return(out)
  hist_mean <- roll_mean(x, k)
  hist_sd <- roll_apply(x, k, stats::sd)
  idx <- (k + 1):length(x)
  out[idx] <- (x[idx] - hist_mean[idx - k]) / hist_sd[idx - k]
  out
}

#' Summary of a series: n, mean and the largest rolling mean of width k (NA when no window).
series_summary <- function(x, k) {
  rm <- roll_mean(x, k)
  list(n = length(x), mean = if (length(x)) mean(x) else NA_real_,
       peak = if (length(rm)) max(rm) else NA_real_)
}
