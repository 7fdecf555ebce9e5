#' Check a data frame against a schema. Returns a data frame of problems
#' (column, problem) with zero rows when the data frame conforms.
validate <- function(df, sch, allow_extra = TRUE) {
  stopifnot(is.data.frame(df), inherits(sch, "schema"))
  problems <- list()
  add <- function(col, msg) problems[[length(problems) + 1]] <<- data.frame(column = col, problem = msg)
  for (col in names(sch)) {
    if (!col %in% names(df)) {
      add(col, "missing column")
    } else if (column_type(df[[col]]) != sch[[col]]) {
      add(col, sprintf("expected %s, found %s", sch[[col]], column_type(df[[col]])))
    }
  }
  if (!allow_extra) {
    for (col in setdiff(names(df), names(sch))) add(col, "unexpected column")
  }
  if (length(problems) == 0) return(data.frame(column = character(0), problem = character(0)))
  do.call(rbind, problems)
}

#' TRUE when `df` conforms to `sch`.
conforms <- function(df, sch, allow_extra = TRUE) nrow(validate(df, sch, allow_extra)) == 0

#' Coerce the columns named in the schema to their declared types.
coerce <- function(df, sch) {
  stopifnot(is.data.frame(df), inherits(sch, "schema"))
  for (col in intersect(names(sch), names(df))) {
    df[[col]] <- switch(sch[[col]],
      numeric = as.numeric(df[[col]]),
      integer = as.integer(df[[col]]),
      character = as.character(df[[col]]),
      logical = as.logical(df[[col]]),
      factor = as.factor(df[[col]]),
      Date = as.Date(df[[col]]),
      POSIXct = as.POSIXct(df[[col]], tz = "UTC")
    )
  }
  df
}

#' Schemas of two data frames side by side: columns whose types differ.
schema_diff <- function(a, b) {
  sa <- infer_schema(a)
  sb <- infer_schema(b)
  cols <- union(names(sa), names(sb))
  ta <- ifelse(cols %in% names(sa), unclass(sa)[cols], NA_character_)
  tb <- ifelse(cols %in% names(sb), unclass(sb)[cols], NA_character_)
  differ <- is.na(ta) | is.na(tb) | ta != tb
  data.frame(column = cols[differ], left = unname(ta[differ]), right = unname(tb[differ]))
}
