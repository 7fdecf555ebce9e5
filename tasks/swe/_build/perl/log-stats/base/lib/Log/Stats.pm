package Log::Stats;

# Summaries of web server access logs (combined log format): requests per status class,
# busiest clients, unique visitors, slowest paths and response-time percentiles.

use strict;
use warnings;
use Carp qw(croak);
use List::Util qw(sum0 max);

our $VERSION = '1.2.0';

my $LINE = qr{
    ^(?<ip>\S+) \s+ \S+ \s+ (?<user>\S+) \s+
    \[(?<time>[^\]]+)\] \s+
    "(?<method>[A-Z]+) \s+ (?<path>\S+) \s+ [^"]*" \s+
    (?<status>\d{3}) \s+ (?<bytes>\d+|-)
    (?: \s+ "[^"]*" \s+ "(?<agent>[^"]*)" )?
    (?: \s+ (?<ms>\d+(?:\.\d+)?) )?
    \s*$
}x;

sub new {
    my ($class, %opt) = @_;
    return bless { entries => [], bad => 0, strict => $opt{strict} // 0 }, $class;
}

sub parse_line {
    my ($line) = @_;
    return undef unless $line =~ $LINE;
    my %e = %+;
    $e{bytes} = 0 if $e{bytes} eq '-';
    $e{path} =~ s/\?.*//;
    return \%e;
}

sub add_line {
    my ($self, $line) = @_;
    my $e = parse_line($line);
    if (!$e) {
        croak "unparseable log line: $line" if $self->{strict};
        $self->{bad}++;
        return 0;
    }
    push @{ $self->{entries} }, $e;
    return 1;
}

sub add_lines {
    my ($self, @lines) = @_;
    my $n = 0;
    $n += $self->add_line($_) for @lines;
    return $n;
}

sub add_file {
    my ($self, $path) = @_;
    open my $fh, '<', $path or croak "cannot open $path: $!";
    my $n = 0;
    while (my $line = <$fh>) {
        chomp $line;
        next unless length $line;
        $n += $self->add_line($line);
    }
    close $fh;
    return $n;
}

sub count     { scalar @{ $_[0]{entries} } }
sub bad_lines { $_[0]{bad} }

sub status_classes {
    my ($self) = @_;
    my %c;
    $c{ substr($_->{status}, 0, 1) . 'xx' }++ for @{ $self->{entries} };
    return \%c;
}

sub error_rate {
    my ($self) = @_;
    return 0 unless $self->count;
    my $errors = grep { $_->{status} >= 500 } @{ $self->{entries} };
    return $errors / $self->count;
}

sub bytes_total {
    my ($self) = @_;
    return sum0 map { $_->{bytes} } @{ $self->{entries} };
}

# The `n` clients with the most requests, as [ip, count] pairs; ties broken by ip.
sub top_clients {
    my ($self, $n) = @_;
    my %by;
    $by{ $_->{ip} }++ for @{ $self->{entries} };
    my @sorted = sort { $by{$b} <=> $by{$a} || $a cmp $b } keys %by;
    splice @sorted, $n if @sorted > $n;
    return map { [ $_, $by{$_} ] } @sorted;
}

# Distinct (ip, user agent) pairs, in order of first appearance.
sub unique_visitors {
    my ($self) = @_;
    my @seen;
    for my $e (@{ $self->{entries} }) {
        my $key = join "\t", $e->{ip}, $e->{agent} // '';
        push @seen, $key unless grep { $_ eq $key } @seen;
    }
    return map { [ split /\t/, $_, 2 ] } @seen;
}

# Response-time percentile (nearest rank) over entries that logged a time, or undef.
sub percentile {
    my ($self, $p) = @_;
    croak "percentile must be within 0..100" if $p < 0 || $p > 100;
    my @ms = sort { $a <=> $b } map { $_->{ms} } grep { defined $_->{ms} } @{ $self->{entries} };
    return undef unless @ms;
    my $rank = $p == 0 ? 1 : int(($p / 100) * @ms + 0.999999);
    return $ms[ $rank - 1 ];
}

sub slowest_paths {
    my ($self, $n) = @_;
    my %worst;
    for my $e (grep { defined $_->{ms} } @{ $self->{entries} }) {
        $worst{ $e->{path} } = max($worst{ $e->{path} } // 0, $e->{ms});
    }
    my @sorted = sort { $worst{$b} <=> $worst{$a} || $a cmp $b } keys %worst;
    splice @sorted, $n if @sorted > $n;
    return map { [ $_, $worst{$_} ] } @sorted;
}

1;
