/*
 * A TLS 1.2 server that renegotiates in the middle of a connection, for
 * spec/regress/tcp_tls_renegotiation_spec.lua (Python's ssl module cannot
 * start a renegotiation). Built by that spec with cc and OpenSSL.
 *
 *   tls_reneg_peer CERT KEY     prints "port N", then serves connections
 *                               one after the other until killed
 *
 * Each connection: the handshake; a line "reneg <ms>" from the client;
 * a HelloRequest; <ms> milliseconds of silence (the client's answer, its
 * ClientHello, waits in the kernel); a read, which completes the
 * renegotiation and returns the client's next line L; then the answer
 * "echo:<renegotiations>:L\n", and reads until the client closes.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int
read_line(SSL *ssl, char *buf, int size)
{
    int n = 0;

    while (n < size - 1) {
        if (SSL_read(ssl, buf + n, 1) != 1)
            return -1;
        if (buf[n++] == '\n')
            break;
    }
    buf[n] = '\0';
    return n;
}


static void
serve(SSL_CTX *ctx, int fd)
{
    SSL *ssl = SSL_new(ctx);
    char line[512], out[600];
    int ms;

    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1 || read_line(ssl, line, sizeof(line)) < 0
        || sscanf(line, "reneg %d", &ms) != 1)
        goto done;
    if (SSL_renegotiate(ssl) != 1 || SSL_do_handshake(ssl) != 1)
        goto done;
    usleep((useconds_t) ms * 1000);
    if (read_line(ssl, line, sizeof(line)) < 0)
        goto done;
    snprintf(out, sizeof(out), "echo:%ld:%s", SSL_num_renegotiations(ssl),
             line);
    if (SSL_write(ssl, out, (int) strlen(out)) <= 0)
        goto done;
    while (SSL_read(ssl, line, sizeof(line)) > 0) {
    }
done:
    ERR_clear_error();
    SSL_free(ssl);
    close(fd);
}


int
main(int argc, char **argv)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    SSL_CTX *ctx;
    int ls, one = 1;

    if (argc != 3)
        return 2;
    ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL || !SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION)
        || SSL_CTX_use_certificate_chain_file(ctx, argv[1]) != 1
        || SSL_CTX_use_PrivateKey_file(ctx, argv[2], SSL_FILETYPE_PEM) != 1) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ls = socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))
        || bind(ls, (struct sockaddr *) &a, sizeof(a)) || listen(ls, 16)
        || getsockname(ls, (struct sockaddr *) &a, &alen)) {
        perror("tls_reneg_peer");
        return 1;
    }
    printf("port %d\n", ntohs(a.sin_port));
    fflush(stdout);
    for (;;) {
        int fd = accept(ls, NULL, NULL);
        if (fd >= 0)
            serve(ctx, fd);
    }
}
