cd /workspace/calc
cat > Makefile <<'MK'
CC = gcc
CFLAGS = -O2 -Wall -Iinclude

OBJS = build/main.o build/ops.o build/parse.o

bin/calc: $(OBJS)
	mkdir -p bin
	$(CC) $(CFLAGS) -o $@ $^

build/%.o: src/%.c include/ops.h
	mkdir -p build
	$(CC) $(CFLAGS) -c $< -o $@

clean:
	rm -rf build bin

.PHONY: clean
MK
make
