package Config::Ini;

# A small INI reader/writer: [sections], key = value pairs, ; and # comments,
# "quoted values", ${section.key} interpolation and typed getters.

use strict;
use warnings;
use Carp qw(croak);

our $VERSION = '0.4.1';

sub new {
    my ($class, %opt) = @_;
    my $self = bless {
        data      => {},
        order     => [],
        default   => $opt{default_section} // '_',
        lowercase => $opt{lowercase_keys} // 1,
    }, $class;
    return $self;
}

sub read_file {
    my ($self, $path) = @_;
    open my $fh, '<:encoding(UTF-8)', $path or croak "cannot open $path: $!";
    local $/;
    my $text = <$fh>;
    close $fh;
    return $self->read_string($text);
}

sub read_string {
    my ($self, $text) = @_;
    my $section = $self->{default};
    my $lineno  = 0;
    for my $line (split /\r?\n/, $text) {
        $lineno++;
        next if $line =~ /^\s*(?:[;#].*)?$/;
        if ($line =~ /^\s*\[\s*([^\]]+?)\s*\]\s*$/) {
            $section = $1;
            $self->_section($section);
            next;
        }
        croak "line $lineno: expected key = value, got '$line'" unless $line =~ /=/;
        my ($key, $value) = split /=/, $line;
        $key = _trim($key);
        croak "line $lineno: empty key" if $key eq '';
        $key = lc $key if $self->{lowercase};
        $self->set($section, $key, _value($value // ''));
    }
    return $self;
}

sub _section {
    my ($self, $name) = @_;
    unless (exists $self->{data}{$name}) {
        $self->{data}{$name} = { keys => {}, order => [] };
        push @{ $self->{order} }, $name;
    }
    return $self->{data}{$name};
}

sub _trim {
    my ($s) = @_;
    $s =~ s/^\s+|\s+$//g;
    return $s;
}

sub _value {
    my ($raw) = @_;
    my $v = _trim($raw);
    if ($v =~ /^"(.*)"$/) {
        ($v = $1) =~ s/\\(["\\])/$1/g;
        return $v;
    }
    $v =~ s/\s+[;#].*$//;    # trailing comment on an unquoted value
    return $v;
}

sub set {
    my ($self, $section, $key, $value) = @_;
    my $sec = $self->_section($section);
    push @{ $sec->{order} }, $key unless exists $sec->{keys}{$key};
    $sec->{keys}{$key} = $value;
    return $self;
}

sub sections {
    my ($self) = @_;
    return grep { $_ ne $self->{default} || @{ $self->{data}{$_}{order} } } @{ $self->{order} };
}

sub keys_of {
    my ($self, $section) = @_;
    my $sec = $self->{data}{$section} or return ();
    return @{ $sec->{order} };
}

sub has {
    my ($self, $section, $key) = @_;
    return exists $self->{data}{$section} && exists $self->{data}{$section}{keys}{$key};
}

sub get {
    my ($self, $section, $key, $default) = @_;
    return $default unless $self->has($section, $key);
    return $self->_interpolate($self->{data}{$section}{keys}{$key}, $section, {});
}

sub _interpolate {
    my ($self, $value, $section, $seen) = @_;
    $value =~ s!\$\{(?:([^.}]+)\.)?([^}]+)\}!$self->_resolve(defined $1 ? $1 : $section, $2, $seen)!ge;
    return $value;
}

sub _resolve {
    my ($self, $s, $k, $seen) = @_;
    croak "interpolation loop at $s.$k" if $seen->{"$s.$k"}++;
    croak "unknown reference $s.$k" unless $self->has($s, $k);
    return $self->_interpolate($self->{data}{$s}{keys}{$k}, $s, {%$seen});
}

sub get_int {
    my ($self, $section, $key, $default) = @_;
    my $v = $self->get($section, $key);
    return $default unless defined $v;
    croak "$section.$key is not an integer: '$v'" unless $v =~ /^[+-]?\d+$/;
    return 0 + $v;
}

my %BOOL = (map({ $_ => 1 } qw(1 yes true on)), map({ $_ => 0 } qw(0 no false off)));

sub get_bool {
    my ($self, $section, $key, $default) = @_;
    my $v = $self->get($section, $key);
    return $default unless defined $v;
    my $b = $BOOL{ lc $v };
    croak "$section.$key is not a boolean: '$v'" unless defined $b;
    return $b;
}

sub get_list {
    my ($self, $section, $key) = @_;
    my $v = $self->get($section, $key);
    return () unless defined $v && length $v;
    return map { _trim($_) } split /,/, $v;
}

sub to_string {
    my ($self) = @_;
    my @out;
    for my $name ($self->sections) {
        push @out, '' if @out;
        push @out, "[$name]" unless $name eq $self->{default};
        my $sec = $self->{data}{$name};
        for my $k (@{ $sec->{order} }) {
            my $v = $sec->{keys}{$k};
            if ($v =~ /^\s|\s$|[;#"]/ ) {
                (my $q = $v) =~ s/(["\\])/\\$1/g;
                $v = qq{"$q"};
            }
            push @out, "$k = $v";
        }
    }
    return join("\n", @out) . "\n";
}

1;
