use strict;
use warnings;
use Test::More;
use Log::Stats;
require './t/lib_lines.pl';

my $e = Log::Stats::parse_line((sample_lines())[1]);
is($e->{ip}, '10.0.0.2', 'client address');
is($e->{user}, 'bob', 'remote user');
is($e->{path}, '/api/login', 'query string removed from the path');
is($e->{ms}, '95.5', 'response time');
is(Log::Stats::parse_line('nope'), undef, 'garbage does not parse');

my $s = Log::Stats->new;
is($s->add_lines(sample_lines()), 5, 'five lines parse');
is($s->bad_lines, 1, 'one bad line counted');
eval { Log::Stats->new(strict => 1)->add_line('nope') };
like($@, qr/unparseable/, 'strict mode dies on bad lines');

done_testing;
