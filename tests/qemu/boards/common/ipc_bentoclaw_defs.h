/*
 * ipc_bentoclaw_defs.h — a stand-in, for the emulated boards, for the BENTO
 * firmware's header of the same name: the claw panel's IPC command, client
 * and message types, with the vendor's values (VENDOR-SDK.md §1.4).
 */
#ifndef BENTOCLAW_STANDIN_IPC_BENTOCLAW_DEFS_H
#define BENTOCLAW_STANDIN_IPC_BENTOCLAW_DEFS_H

#define IPC_CMD_CLAW_UI_UPDATE (0xCA)
#define IPC_CMD_CLAW_STREAM_TOKEN (0xCB)
#define CM55_IPC_CLAW_CLIENT_ID (3UL)

#define CLAW_STATE_IDLE (0)
#define CLAW_STATE_EXECUTING (1)
#define CLAW_STATE_THINKING (2)
#define CLAW_STATE_ERROR (3)

#define CLAW_UI_STATUS_TEXT (0)
#define CLAW_UI_LAST_CMD (1)
#define CLAW_UI_LAST_RESULT (2)
#define CLAW_UI_PROGRESS (3)
#define CLAW_UI_ERROR (4)
#define CLAW_UI_CLEAR (5)
#define CLAW_UI_STATS (6)

#endif
