use strict;
use warnings;
use Test::More;
use Log::Stats;
require './t/lib_lines.pl';

my $s = Log::Stats->new;
$s->add_lines(sample_lines());

is_deeply($s->status_classes, { '2xx' => 2, '3xx' => 1, '4xx' => 1, '5xx' => 1 }, 'status classes');
is($s->error_rate, 0.2, 'error rate');
is($s->bytes_total, 2688, 'bytes, with - as zero');
is_deeply([ $s->top_clients(2) ], [ [ '10.0.0.1', 3 ], [ '10.0.0.2', 1 ] ], 'top clients, ties by address');
is_deeply([ $s->unique_visitors ],
    [ [ '10.0.0.1', 'curl/8.0' ], [ '10.0.0.2', 'Firefox' ], [ '10.0.0.3', '' ], [ '10.0.0.1', 'Firefox' ] ],
    'unique visitors in order of first appearance');
is($s->percentile(50), 31, 'median response time');
is($s->percentile(100), 240, 'max response time');
is_deeply([ $s->slowest_paths(1) ], [ [ '/api/items', 240 ] ], 'slowest path');
is(Log::Stats->new->percentile(90), undef, 'no times, no percentile');

done_testing;
