# A schema is a named character vector: column name -> type name.
# Type names are the first class of a column ("numeric", "integer", "character",
# "logical", "factor", "Date", "POSIXct").

#' Build a schema from `name = "type"` pairs.
schema <- function(...) {
  types <- c(...)
  if (length(types) == 0) return(structure(character(0), names = character(0), class = "schema"))
  if (is.null(names(types)) || any(names(types) == "")) stop("every schema entry needs a column name")
  unknown <- setdiff(unique(unname(types)), known_types())
  if (length(unknown) > 0) stop("unknown type(s): ", paste(unknown, collapse = ", "))
  structure(types, class = "schema")
}

known_types <- function() c("numeric", "integer", "character", "logical", "factor", "Date", "POSIXct")

#' The type name of one column.
column_type <- function(x) class(x)[1]

#' Infer the schema of a data frame.
infer_schema <- function(df) {
  stopifnot(is.data.frame(df))
  types <- sapply(df, class)
  if (length(types) == 0) return(schema())
  do.call(schema, as.list(types))
}

print.schema <- function(x, ...) {
  cat("<schema>", length(x), "columns\n")
  for (n in names(x)) cat(sprintf("  %-12s %s\n", n, x[[n]]))
  invisible(x)
}
