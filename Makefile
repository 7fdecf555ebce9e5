# The two quick-start commands: `make up` (install + serve every environment) and `make test`.
.PHONY: install up test bench

install:
	./scripts/bootstrap.sh

up: install
	.venv/bin/envhub serve --host $${ENVHUB_HOST:-127.0.0.1} --port $${ENVHUB_PORT:-8000}

# The SWE tests fail (not skip) for a toolchain `make install` was to install (ENVHUB_SWE_LANGUAGES).
test: install
	ENVHUB_SWE_REQUIRED=$${ENVHUB_SWE_LANGUAGES:-all} .venv/bin/python -m pytest -q

bench:
	.venv/bin/python benchmarks/protocol.py
