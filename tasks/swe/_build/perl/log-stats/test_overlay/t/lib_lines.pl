# Shared sample lines for the tests.
sub sample_lines {
    return (
        '10.0.0.1 - - [01/Jan/2026:00:00:01 +0000] "GET /index.html HTTP/1.1" 200 512 "-" "curl/8.0" 12',
        '10.0.0.2 - bob [01/Jan/2026:00:00:02 +0000] "POST /api/login?next=/ HTTP/1.1" 302 0 "-" "Firefox" 95.5',
        '10.0.0.1 - - [01/Jan/2026:00:00:03 +0000] "GET /api/items HTTP/1.1" 500 - "-" "curl/8.0" 240',
        '10.0.0.3 - - [01/Jan/2026:00:00:04 +0000] "GET /index.html HTTP/1.1" 404 128',
        'garbage line',
        '10.0.0.1 - - [01/Jan/2026:00:00:05 +0000] "GET /api/items HTTP/1.1" 200 2048 "-" "Firefox" 31',
    );
}
1;
