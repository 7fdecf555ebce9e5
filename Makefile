# The two quick-start commands: `make up` (install + serve every environment) and `make test`.
.PHONY: install up test bench security-table

install:
	./scripts/bootstrap.sh

up: install
	.venv/bin/envhub serve --host $${ENVHUB_HOST:-127.0.0.1} --port $${ENVHUB_PORT:-8000}

# The SWE tests fail (not skip) for a toolchain `make install` was to install (ENVHUB_SWE_LANGUAGES);
# the 30 slowest tests are listed, so a CI log shows where the time of its longest phase goes.
test: install
	ENVHUB_SWE_REQUIRED=$${ENVHUB_SWE_LANGUAGES:-all} .venv/bin/python -m pytest -q --durations=30

# A few minutes; `make bench FULL=1` for the issue's sizes. Rewrites the table in benchmarks/README.md.
bench:
	.venv/bin/python benchmarks/table.py $(if $(FULL),--full,)

security-table:  # run tests/security in full and write its table into docs/security.md
	.venv/bin/python scripts/security_table.py
