use strict;
use warnings;
use Test::More;
use Log::Stats;

# A day of traffic from many clients must be summarised in seconds, not hours.
my $n = 100_000;
my $s = Log::Stats->new;
for my $i (1 .. $n) {
    my $ip = join '.', 10, ($i >> 16) & 255, ($i >> 8) & 255, $i & 255;
    $s->add_line(qq{$ip - - [01/Jan/2026:00:00:00 +0000] "GET /p HTTP/1.1" 200 1 "-" "agent" 1});
}
$s->add_line(q{10.0.0.1 - - [01/Jan/2026:00:00:00 +0000] "GET /p HTTP/1.1" 200 1 "-" "agent" 1});
is($s->count, $n + 1, 'all lines parsed');

sub within {
    my ($seconds, $code) = @_;
    my $pid = fork // die "fork: $!";
    if (!$pid) { exit($code->() ? 0 : 1) }
    my $done = eval {
        local $SIG{ALRM} = sub { die "timeout\n" };
        alarm $seconds;
        waitpid($pid, 0);
        alarm 0;
        1;
    };
    if (!$done) { kill 'KILL', $pid; waitpid($pid, 0); return 0 }
    return $? == 0;
}

ok(within(15, sub { my @u = $s->unique_visitors; @u == $n }), 'unique visitors of 100k clients within 15s');
ok(within(15, sub { my @t = $s->top_clients(3); $t[0][1] == 2 }), 'top clients of 100k clients within 15s');

done_testing;
