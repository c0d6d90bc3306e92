// The Expo app's screens over src/session.ts (type-checked and run by `expo start` in this
// folder after `npm install`; the repository's CI runs src/session.ts under Node).
import * as SecureStore from 'expo-secure-store';
import { useEffect, useMemo, useState } from 'react';
import { Button, SafeAreaView, Text, TextInput } from 'react-native';
import { mobileClient, resume, signIn, submitCode, type Screen } from './src/session';

const client = mobileClient({ baseUrl: process.env.EXPO_PUBLIC_SVC_BASE_URL ?? 'http://localhost:3000', store: process.env.EXPO_PUBLIC_SVC_STORE ?? '' }, SecureStore);

export default function App() {
  const [screen, setScreen] = useState<Screen | undefined>();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  useEffect(() => void resume(client).then(setScreen), []);
  useEffect(() => {
    if (screen?.screen !== 'home') return;
    const subscription = client.events.subscribe('live', { topics: ['userCreated'], onEvent: (e) => setEvents((list) => [`${e.data.email ?? e.data.id} joined`, ...list]) });
    return () => subscription.close();
  }, [screen?.screen]);
  const body = useMemo(() => {
    if (screen?.screen === 'home')
      return (
        <>
          <Text>Signed in as {screen.email}</Text>
          {events.map((line) => (
            <Text key={line}>{line}</Text>
          ))}
          <Button title="Sign out" onPress={() => void client.signOut().then(() => setScreen(undefined))} />
        </>
      );
    if (screen?.screen === 'code')
      return (
        <>
          <TextInput placeholder="Code from your authenticator app" value={code} onChangeText={setCode} keyboardType="number-pad" />
          <Button title="Continue" onPress={() => void submitCode(client, 'totp', code).then(setScreen)} />
        </>
      );
    return (
      <>
        {screen?.screen === 'error' && <Text>{screen.message}</Text>}
        <TextInput placeholder="Email" value={username} onChangeText={setUsername} autoCapitalize="none" />
        <TextInput placeholder="Password" value={password} onChangeText={setPassword} secureTextEntry />
        <Button title="Sign in" onPress={() => void signIn(client, username, password).then(setScreen)} />
      </>
    );
  }, [screen, username, password, code, events]);
  return <SafeAreaView>{body}</SafeAreaView>;
}
