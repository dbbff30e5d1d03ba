/*
 * Return codes shared by the Lua-free layers (cs_buffer, cs_net) and the
 * Lua-facing files. Nothing else lives here, so Lua-free code and the fuzz
 * targets can include it without Lua.
 */
#ifndef CS_RC_H
#define CS_RC_H

#define CS_OK     0    /* done */
#define CS_AGAIN  (-1) /* would block: park and try again */
#define CS_CLOSED (-2) /* the peer closed the connection */
#define CS_ERROR  (-3) /* an error; errno or the object says which */
#define CS_LIMIT  (-4) /* a size limit was hit (maxline) */

#endif
