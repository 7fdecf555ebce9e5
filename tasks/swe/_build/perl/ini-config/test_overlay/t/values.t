use strict;
use warnings;
use Test::More;
use Config::Ini;

my $ini = Config::Ini->new->read_string(<<'INI');
[v]
quoted = "  spaced ; not a comment  "
escaped = "say \"hi\""
list = a, b ,c
empty =
INI

is($ini->get('v', 'quoted'), '  spaced ; not a comment  ', 'quoted values keep spaces and ;');
is($ini->get('v', 'escaped'), 'say "hi"', 'escaped quotes');
is_deeply([$ini->get_list('v', 'list')], [qw(a b c)], 'lists');
is($ini->get('v', 'empty'), '', 'empty value');

my $db = Config::Ini->new->read_string(<<'INI');
[db]
dsn = postgres://app@db/main?sslmode=require&connect_timeout=5
expr = a=b=c
INI
is($db->get('db', 'dsn'), 'postgres://app@db/main?sslmode=require&connect_timeout=5', 'values may contain =');
is($db->get('db', 'expr'), 'a=b=c', 'every = after the first belongs to the value');

eval { Config::Ini->new->read_string("[a]\nnot a pair\n") };
like($@, qr/line 2: expected key = value/, 'syntax errors name the line');

eval { Config::Ini->new->read_string("[a]\nx = \${y}\ny = \${x}\n")->get('a', 'x') };
like($@, qr/interpolation loop/, 'interpolation loops are detected');

eval { Config::Ini->new->read_string("[a]\nn = ten\n")->get_int('a', 'n') };
like($@, qr/not an integer/, 'typed getters check the type');

done_testing;
