use strict;
use warnings;
use Test::More;
use Config::Ini;

my $ini = Config::Ini->new->read_string(<<'INI');
; global settings
name = demo

[server]
Host = example.org
port = 8080   ; the public port
debug = yes

[paths]
root = /srv/app
logs = ${root}/logs
cache = ${server.host}/cache
INI

is($ini->get('_', 'name'), 'demo', 'keys before any section go to the default section');
is($ini->get('server', 'host'), 'example.org', 'keys are lower-cased');
is($ini->get_int('server', 'port'), 8080, 'trailing comments are stripped');
ok($ini->get_bool('server', 'debug'), 'booleans');
is($ini->get('server', 'missing', 'dflt'), 'dflt', 'default for a missing key');
is($ini->get('paths', 'logs'), '/srv/app/logs', 'interpolation within a section');
is($ini->get('paths', 'cache'), 'example.org/cache', 'interpolation across sections');
is_deeply([$ini->sections], ['_', 'server', 'paths'], 'sections in file order');
is_deeply([$ini->keys_of('server')], [qw(host port debug)], 'keys in file order');

done_testing;
