env <- new.env(parent = globalenv())
for (f in sort(list.files("R", pattern = "[.][Rr]$", full.names = TRUE))) sys.source(f, envir = env)
out <- file.path(Sys.getenv("REPORT_DIR"), "junit.xml")
res <- testthat::test_dir("tests/testthat", env = env, stop_on_failure = FALSE, load_package = "none",
                          reporter = testthat::JunitReporter$new(file = out))
