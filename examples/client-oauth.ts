// The OAuth example of docs/client.md: a client that signs in when the server answers 401, and keeps its tokens in
// the user's config directory. The call sits in a function, so importing this file contacts no server.
// #region oauth
import { fileTokenStore, McpClient, OAuthClient } from 'mrtr/client';

// #endregion

/** A stand-in for the application's browser step: show the link, wait for the redirect to come back. */
const openAndWaitForRedirect = async (url: URL, redirectUri: string): Promise<URL> => {
  console.error(`open ${url.href}`);
  return new URL(`${redirectUri}?code=from-the-browser`);
};

export async function callWithOAuth(): Promise<void> {
  // #region oauth
  const auth = new OAuthClient({
    authorize: (url, redirectUri) => openAndWaitForRedirect(url, redirectUri), // the browser step, yours
    redirectUri: 'http://127.0.0.1:8976/callback',
    store: fileTokenStore(), // ~/.config/mrtr/tokens.json, 0600
  });
  const client = new McpClient({ server: 'https://mcp.example.com/mcp', auth });
  const outcome = await client.callTool('search', { query: 'open incidents' });
  // #endregion
  console.log(outcome.status);
  await client.close();
}
