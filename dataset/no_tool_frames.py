"""
No-call questions in the ways people ask them (make_agent_data.py --no_tool_frames 1): frames around a subject
and more subjects, each with a short answer.

Written by hand, one at a time, from a brief that named only the tool world and the forms to cover (casual and
formal, very short and long, lower case and no punctuation, a few typos, a sentence of context first;
explanation, history, how it works, pros and cons, an analogy, an opinion), by a writer who had not read the
phrasing tables or the held-out sets. Then cut here: a frame as close to an eval phrasing as 0.7 (difflib's
ratio, placeholders out), a frame that is already a topic template, a subject that is already a train or eval
topic, an answer that holds an evaluation number (tests/test_no_tool_frames.py checks the first and the last
again). The frames are carved into SFT and RL like every template table; the subjects are shared, as the topic
templates share theirs.
"""

ASK_FRAMES = {
    "zh": [
        '{topic}？',
        '请解释{topic}。',
        '能给我讲讲{topic}吗？',
        '可以简单介绍下{topic}吗？',
        '帮我解释下{topic}',
        '{topic}到底是啥',
        '{topic}是啥意思',
        '说说{topic}',
        '讲讲{topic}呗',
        '我对{topic}完全不了解，能从头讲讲吗？',
        '明天要考试了，{topic}还没搞懂，快帮帮我！',
        '孩子问我{topic}是什么，我答不上来，你能帮我解释下吗？',
        '请用通俗易懂的话解释{topic}。',
        '用大白话讲讲{topic}',
        '像给小学生讲课那样解释{topic}',
        '{topic}的原理是什么？',
        '{topic}是如何运作的？',
        '{topic}的历史是怎样的？',
        '{topic}的起源是什么？',
        '为什么{topic}很重要？',
        '{topic}有什么意义？',
        '{topic}有哪些优缺点？',
        '{topic}的利与弊',
        '关于{topic}有哪些常见误区？',
        '能打个比方解释{topic}吗？',
        '用比喻的方式讲讲{topic}',
        '{topic}入门指南',
        '新手该怎么理解{topic}？',
        '给我讲个关于{topic}的冷知识',
        '{topic}有什么有趣的事实？',
        '你怎么看{topic}？',
        '你对{topic}有什么看法？',
        '请问{topic}指的是什么？',
        '请简要概述{topic}。',
        '总结下{topic}的要点',
        '概括下{topic}',
        '{topic}的核心概念有哪些？',
        '我总是搞不懂{topic}，能帮我理清楚吗？',
        '老师上课讲了{topic}，我没听懂，能再讲讲吗？',
        '经常听人提到{topic}，这到底是什么？',
        '{topic}是干嘛的',
        '如何理解{topic}？',
        '怎样通俗地理解{topic}？',
        '请详细介绍{topic}。',
        '麻烦详细讲讲{topic}，谢谢！',
        '您好，想请教下{topic}是什么意思。',
        '请教：{topic}的基本原理',
        '科普下{topic}',
        '求科普{topic}！',
        '跪求大神解释{topic}',
        '有人能解释下{topic}吗',
        '{topic}到底有啥用？',
        '了解{topic}有什么用？',
        '为什么大家都在讨论{topic}？',
        '{topic}的发展历程是怎样的？',
        '简述{topic}的发展史',
        '{topic}背后有什么故事？',
        '{topic}背后的逻辑是什么？',
        '写段话介绍{topic}',
        '帮我写个关于{topic}的简短介绍',
        '给我个{topic}的简单解释',
        '用小孩能听懂的方式解释{topic}',
        '怎么跟老人解释{topic}？',
        '如果要向外行解释{topic}，你会怎么说？',
        '我在写论文，需要了解{topic}的背景，能介绍下吗？',
        '准备做个关于{topic}的演讲，应该讲哪些内容？',
        '{topic}的关键点是什么？',
        '关于{topic}，我需要了解哪些基础知识？',
        '想入门{topic}，该从哪里开始？',
        '{topic}难理解吗？',
        '{topic}值得了解吗？',
        '人们对{topic}的认识是怎么演变的？',
        '{topic}有哪些争议？',
        '支持和反对{topic}的理由各是什么？',
        '{topic}和日常生活有什么关系？',
        '举个例子帮我理解{topic}',
        '{topic}最让人意外的地方是什么？',
        '说实话，我不太懂{topic}，能解释下吗？',
        '随便问下，{topic}是啥？',
        '嗨，能聊聊{topic}吗？',
        '你好！我想了解下{topic}。',
        '请对{topic}做个详细的说明。',
        '能深入讲讲{topic}吗？',
        '{topic}简介',
        '{topic}通俗解释',
        '{topic} 简单说说',
        '{topic}是个什么概念',
        '{topic}的定义',
        '给{topic}下个定义',
        '什么叫{topic}',
        '啥是{topic}啊',
        '{topic}咋回事',
        '你能告诉我关于{topic}的事吗？',
        '{topic}有啥好玩的知识点',
        '聊点关于{topic}的有趣知识',
        '你觉得{topic}被高估了吗？',
        '{topic}真的像大家说的那么重要吗？',
        '能不能用最简单的话说清楚{topic}？',
        '长话短说，{topic}是什么？',
        '简单来说，{topic}是什么？',
        '不要术语，直接告诉我{topic}是什么',
        '别用专业术语，解释下{topic}',
        '请从专业视角剖析{topic}。',
        '人们最早是怎么认识{topic}的？',
        '{topic}有哪些主要特点？',
        '帮我梳理下{topic}的知识点',
        '复习{topic}，帮我划个重点',
        '期末复习中，能帮我总结{topic}吗？',
        '我朋友跟我争论{topic}，你能讲讲基本事实吗？',
        '昨晚看了个关于{topic}的纪录片，想多了解点',
        '看书看到{topic}，没太看懂，求解释',
        '请问您能解释{topic}吗？',
        '劳驾解释下{topic}',
        '可否请您介绍{topic}的相关知识？',
        '烦请简要说明{topic}。',
        '{topic}是啥玩意儿',
        '{topic}咋理解啊',
        '{topic}什么意思啊？',
        '解释{topic}',
        '介绍{topic}',
        '{topic}是神马？',
        '介少下{topic}',
        '能解是下{topic}吗',
        '{topic}市什么意思',
        '{topic}是什麽',
        '我始终搞不明白{topic}',
        '{topic}这个东西到底怎么理解',
        '作为外行，怎么快速理解{topic}？',
        '你能当我的老师，教我{topic}吗？',
        '关于{topic}，有什么是大多数人不知道的？',
        '{topic}重要在哪里？',
        '请从正反面谈谈{topic}。',
        '{topic}的本质是什么？',
        '深入浅出地讲讲{topic}',
        '能通俗地讲解{topic}吗，我是文科生',
        '我是理科生，想了解{topic}，请讲得专业点',
        '给初学者讲讲{topic}',
        '{topic}可以类比成什么？',
        '讲讲{topic}的来龙去脉吧',
        '求问{topic}',
        '请问下{topic}是怎么回事呀',
        '在吗？想问问{topic}',
        'hello，{topic}是什么呀',
    ],
    "en": [
        'Can you explain {topic} to me?',
        'eli5 {topic}',
        '{topic}?',
        '{topic} explained',
        'Tell me something interesting about {topic}.',
        "I've never really understood {topic}. Could you break that down for me?",
        'my kid asked me about {topic} and I had no idea what to say — can you help?',
        'Could you give me a brief overview of {topic}?',
        'Give me a quick summary of {topic}.',
        "what's the history of {topic}",
        'How did {topic} come about?',
        "What's the story behind {topic}?",
        'What makes {topic} important?',
        'What are the pros and cons of {topic}?',
        'pros and cons of {topic}',
        'What are some common misconceptions about {topic}?',
        'What do people usually get wrong about {topic}?',
        'Can you explain {topic} with an analogy?',
        'Give me an analogy for {topic}.',
        "I'm a total beginner. Where should I start with {topic}?",
        "A beginner's guide to {topic}, please.",
        'Tell me a fun fact about {topic}.',
        'Got any fun facts about {topic}?',
        "What's your opinion on {topic}?",
        'What do you think of {topic}?',
        'Do you think people overhype {topic}?',
        'Describe {topic} briefly.',
        'Could you kindly provide an explanation of {topic}?',
        'I would appreciate a concise explanation of {topic}.',
        'Would you mind explaining {topic}?',
        "quick question about {topic}: what's the main idea?",
        'whats up with {topic}',
        'can u explain {topic}',
        'explian {topic} pls',
        'tell me abt {topic}',
        'what is the deal with {topic}',
        "So what's the big deal about {topic}?",
        'I keep hearing about {topic}. Could you fill me in?',
        'My teacher mentioned {topic} in class and I got lost. Can you explain?',
        "I have an exam tomorrow and I still don't get {topic}. Help!",
        'For a school project I need to learn about {topic}. What are the key points?',
        'What are the key ideas behind {topic}?',
        'What are the basics of {topic}?',
        'Summarise {topic} in plain language.',
        'Break down {topic} for a complete newbie.',
        'How would you explain {topic} to a child?',
        'How would you describe {topic} to your grandma?',
        "Explain {topic} like I'm a high school student.",
        "what's the gist of {topic}",
        'tl;dr on {topic}?',
        "I'm curious about {topic}. What can you tell me?",
        'Could you shed some light on {topic}?',
        'Walk me through the basics of {topic}, step by step.',
        'Define {topic}.',
        'What is meant by {topic}?',
        'definition of {topic}?',
        "What's the origin of {topic}?",
        'Where does the idea of {topic} come from?',
        "What's so fascinating about {topic}?",
        'Explain {topic} in a nutshell.',
        '{topic} in a nutshell?',
        '{topic} for dummies',
        '{topic} basics',
        'intro to {topic}',
        "I'm writing an essay on {topic}. Could you give me some background?",
        "I'm preparing a presentation about {topic}. What should I cover?",
        'What should everybody understand about {topic}?',
        'Teach me about {topic}.',
        'teach me {topic}',
        'I want to learn about {topic}. Where do I begin?',
        'Is it hard to understand {topic}?',
        'Is it worth learning about {topic}?',
        'How have ideas about {topic} changed over the years?',
        'How did our understanding of {topic} develop?',
        'Debunk some myths about {topic}.',
        'myths vs facts: {topic}',
        'What are the main criticisms of {topic}?',
        'What are the arguments for and against {topic}?',
        "What's the best way to think about {topic}?",
        'Is there a simple way to picture {topic}?',
        'Use a metaphor to explain {topic}.',
        'Compare {topic} to something from everyday life.',
        'Why do people find {topic} confusing?',
        "What's the most surprising thing about {topic}?",
        "Honestly, I don't get {topic}. Explain?",
        "ok so {topic}. what's that about",
        'hey, could you tell me a bit about {topic}?',
        "Hi! I'd love it if you could explain {topic}.",
        'Hello, I have a question regarding {topic}. Could you explain the basics?',
        'Give me an in-depth explanation of {topic}.',
        'Write a short paragraph explaining {topic}.',
        'Write a beginner-friendly explanation of {topic}.',
        'How would a teacher explain {topic} to a class?',
        'Please use easy words to explain {topic}.',
        'Keep it short and explain {topic}.',
        'No jargon please — explain {topic}.',
        'Explain {topic} without using jargon.',
        'Give me the key takeaways on {topic}.',
        'outline {topic} for me',
        'Could you outline the history of {topic}?',
        'How did {topic} start?',
        'When did people begin studying {topic}?',
        'What are the biggest open questions about {topic}?',
        'What are some good ways to learn more about {topic}?',
        "What's your take on {topic}?",
        'Do you have any thoughts on {topic}?',
        'Be honest: is all the hype around {topic} deserved?',
        "I'm having a debate with my friend about {topic}. What are the main facts?",
        'My friend and I were arguing about {topic} last night. Can you settle the basics for us?',
        'Can you give me a rundown on {topic}?',
        'rundown of {topic} pls',
        'Give me a crash course in {topic}.',
        'crash course on {topic}',
        "What's a good way to remember the main ideas of {topic}?",
        'Explain the significance of {topic}.',
        "What's the big picture with {topic}?",
        "Could you clarify {topic} for me? I'm a bit confused.",
        'Im confused about {topic}, help',
        'can you explane {topic}',
        'expain {topic} to me plz',
        'tell me everythng about {topic}',
        'what r the basics of {topic}',
        'plz help me undrstand {topic}',
        'I read about {topic} online and got curious. Could you explain the basics?',
        'I just watched a documentary about {topic}. Can you tell me more?',
        "My grandmother asked me about {topic} and I couldn't give her a good answer. How would you put it?",
        "Pretend I'm a complete outsider and explain {topic}.",
        "Explain {topic} as if I'm a curious teenager.",
        'Explain {topic} to a smart adult with no background in the field.',
        'What are the advantages and disadvantages of {topic}?',
        'Sum up {topic} for me, briefly.',
        'give me the short version of {topic}',
        "long story short, what's the deal with {topic}?",
        'what do i need to understand about {topic}',
        'anything interesting about {topic}?',
        'Provide an overview of {topic} suitable for a general audience.',
        "Explain {topic} in layman's terms.",
        "I'm studying for a quiz. Can you review {topic} with me?",
        'Can you give me an example to help me understand {topic}?',
    ],
}

# (subject, answer): asked in ASK_FRAMES beside the train topics (agent_phrasings.NO_TOOL_TOPICS)
MORE_TOPICS = {
    "zh": [
        ('光合作用',
         '光合作用是绿色植物、藻类和一些细菌利用光能，把二氧化碳和水转化为糖类并释放氧气的过程。在植物中，它主要发生在叶片细胞的叶绿体里。'),
        ('基因',
         '基因是DNA上携带遗传信息的片段，决定着生物的许多性状，比如眼睛的颜色和血型。父母正是通过基因把自身的特征传给后代的。'),
        ('DNA双螺旋结构',
         'DNA由两条链相互缠绕成双螺旋，两条链之间的碱基按A配T、C配G的规则互补配对。这一结构由沃森和克里克在1953年提出，富兰克林拍摄的X射线衍射照片提供了关键证据。'),
        ('自然选择',
         '自然选择是指更适应环境的个体更容易生存和繁殖，使有利的遗传特征在种群中一代代变得更常见。它是达尔文进化论的核心机制。'),
        ('相对论',
         '相对论是爱因斯坦提出的理论，包括狭义相对论和广义相对论。它指出时间和空间的测量结果与观察者的运动状态有关，而引力则是质量和能量使时空弯曲的结果。'),
        ('元素周期表',
         '元素周期表按原子序数排列所有化学元素，性质相似的元素位于同一列。化学家门捷列夫在1869年发表了早期版本，还根据表中的空位预言了当时尚未发现的元素。'),
        ('大爆炸理论',
         '大爆炸理论认为，宇宙大约在138亿年前从一个极其炽热、致密的状态开始膨胀，并在膨胀中逐渐冷却。宇宙微波背景辐射和遥远星系的红移都是支持它的重要证据。'),
        ('熵',
         '熵是描述系统混乱程度的物理量，更准确地说，它反映了系统可能的微观状态有多少。热力学第二定律指出，孤立系统的总熵不会减少，这也是热量总是自发地从高温物体流向低温物体的原因。'),
        ('免疫系统',
         '免疫系统是人体识别并清除细菌、病毒等病原体的防御网络，由白细胞、淋巴器官等组成。它包括反应迅速的先天免疫和能够“记住”病原体的适应性免疫。'),
        ('抗生素',
         '抗生素是能杀死细菌或抑制细菌繁殖的药物，对感冒、流感等病毒感染无效。滥用抗生素会加速细菌产生耐药性，所以应当遵医嘱使用。'),
        ('线粒体',
         '线粒体是细胞里的“能量工厂”，利用氧气把营养物质转化为细胞可以直接使用的能量分子ATP。它拥有自己的少量DNA，科学家认为它起源于远古时期被细胞吞入的细菌。'),
        ('静电',
         '静电是物体表面积累的电荷，通常在两种材料相互摩擦、电子从一方转移到另一方时产生。冬天摸门把手时被“电”一下，就是积累的电荷突然释放。'),
        ('多普勒效应',
         '多普勒效应是指波源和观察者相对运动时，接收到的波的频率发生变化的现象，比如救护车驶近时警笛声变尖，驶远时变低沉。天文学家利用光的多普勒效应判断星系是在靠近还是远离我们。'),
        ('核聚变',
         '核聚变是两个较轻的原子核（如氢的同位素）结合成较重的原子核，并释放出巨大能量的过程。太阳和其他恒星正是靠核聚变发光发热，人类也在努力利用它来发电。'),
        ('板块构造',
         '板块构造理论认为，地球的岩石圈分裂成许多巨大的板块，它们在较软的地幔上缓慢移动。板块之间的碰撞、分离和错动塑造了山脉、海沟和火山。'),
        ('彩虹',
         '彩虹是阳光射入雨滴后发生折射、反射再折射，把白光分解成各种颜色而形成的。所以只有太阳在你身后、前方有雨滴时，才容易看到彩虹。'),
        ('臭氧层',
         '臭氧层是平流层中臭氧浓度较高的区域，能吸收太阳发出的大部分有害紫外线。氟利昂等物质曾使它变薄，国际社会限制使用这些物质后，臭氧层正在慢慢恢复。'),
        ('珊瑚礁',
         '珊瑚礁是由珊瑚虫分泌的石灰质骨骼长期堆积而成的海底结构，珊瑚虫与体内的藻类互利共生。它们只占海底很小的面积，却为大约四分之一的海洋物种提供了栖息地。'),
        ('授粉',
         '授粉是花粉从雄蕊传到雌蕊柱头上的过程，是植物结出种子的前提。风、水以及蜜蜂、蝴蝶、鸟类等动物都能帮助植物传粉。'),
        ('候鸟迁徙',
         '候鸟迁徙是指许多鸟类随季节在繁殖地和越冬地之间长途往返，主要是为了获得充足的食物和适宜的繁殖条件。它们依靠太阳、星星、地磁场和地标来辨别方向。'),
        ('冬眠',
         '冬眠是一些动物为了度过寒冷、缺少食物的冬季而进入的深度休眠状态，体温、心跳和新陈代谢都会大幅降低以节省能量。刺猬、蝙蝠和一些松鼠都会冬眠。'),
        ('生物多样性',
         '生物多样性是指一个地区生命形式的丰富程度，包括基因、物种和生态系统三个层次的多样性。它让生态系统更加稳定，也为人类提供了食物、药物和清洁的水。'),
        ('病毒',
         '病毒是由遗传物质和蛋白质外壳组成的微小病原体，只有进入活细胞、借助宿主细胞才能复制。由于病毒本身不是细胞，抗生素对它不起作用。'),
        ('神经元',
         '神经元就是神经细胞，它通过电信号传递信息，并借助神经递质把信号传给其他细胞。人脑中大约有860亿个神经元。'),
        ('月相',
         '月相是从地球上看到的月亮明亮部分形状的周期性变化，原因是月球绕地球运行时，被太阳照亮的那一半朝向我们的比例在不断改变。从新月到下一次新月大约需要一个月。'),
        ('干细胞',
         '干细胞是一类尚未分化的细胞，既能自我复制，又能分化成血细胞、肌肉细胞、神经细胞等特定类型的细胞。它们帮助身体生长和修复组织，也是再生医学的重要研究对象。'),
        ('文艺复兴',
         '文艺复兴是14至17世纪兴起于意大利、后来扩展到整个欧洲的思想文化运动，重新重视古希腊罗马的学问和人文精神。达·芬奇、米开朗琪罗等艺术大师都出自这一时期。'),
        ('工业革命',
         '工业革命是18世纪后期始于英国的生产方式大变革，机器生产逐步取代了手工劳动。蒸汽机、工厂和铁路深刻改变了人们的工作和生活方式。'),
        ('冷战',
         '冷战是第二次世界大战后以美国和苏联为首的两大阵营之间长期的对抗，大约从20世纪40年代后期持续到1991年苏联解体。双方主要通过军备竞赛、太空竞赛和代理人战争较量，而没有直接开战。'),
        ('丝绸之路',
         '丝绸之路是古代连接中国与中亚、西亚乃至欧洲的贸易路线网络，一般认为始于西汉张骞出使西域。除了丝绸和香料，它还促进了宗教、技术和文化的交流。'),
        ('造纸术',
         '造纸术是中国古代四大发明之一，东汉时蔡伦改进了造纸方法，用树皮、麻头、破布和旧渔网等原料造出了质量较好的纸。纸的普及极大地促进了文化的传播。'),
        ('活字印刷术',
         '活字印刷术由北宋的毕昇发明，他用胶泥刻成单个的字，排版印刷后还可以拆开重复使用。它比雕版印刷更省时省力，是中国古代四大发明之一。'),
        ('科举制度',
         '科举制度是中国古代通过分科考试选拔官员的制度，始于隋朝，1905年被清政府废除，延续了约1300年。它让出身普通的读书人也有机会进入仕途。'),
        ('郑和下西洋',
         '郑和下西洋是明朝永乐至宣德年间，郑和率领庞大船队先后七次远航的壮举，最远到达东非沿岸。这些航行比欧洲大航海时代的远航早了半个多世纪。'),
        ('罗马帝国',
         '罗马帝国始于公元前27年屋大维成为第一位皇帝，鼎盛时期的疆域环绕整个地中海。西罗马帝国在476年灭亡，东罗马（拜占庭）帝国则延续到1453年。'),
        ('启蒙运动',
         '启蒙运动是17至18世纪欧洲的思想解放运动，倡导理性、科学和个人权利，批判专制与迷信。洛克、伏尔泰、卢梭等思想家深刻影响了近代的民主思想。'),
        ('黑死病',
         '黑死病是14世纪中叶席卷欧亚大陆的鼠疫大流行，由鼠疫杆菌引起，常经跳蚤传播。仅在1347年至1351年间，它就夺走了欧洲约三分之一甚至更多人口的生命。'),
        ('兵马俑',
         '兵马俑是秦始皇陵陪葬坑中出土的大量陶制武士和战马，1974年由当地农民打井时偶然发现。陶俑的面貌、发型和神态各不相同，被誉为“世界第八大奇迹”。'),
        ('秦朝的统一',
         '公元前221年，秦王嬴政灭掉六国，建立了中国历史上第一个统一的中央集权王朝，并自称“始皇帝”。他推行郡县制、统一文字，对后世影响深远。'),
        ('印象派',
         '印象派是19世纪后期兴起于法国的绘画流派，强调捕捉光线和色彩的瞬间变化，笔触明显而轻快。莫奈、雷诺阿和德加都是它的代表画家。'),
        ('巴洛克音乐',
         '巴洛克音乐指大约1600年到1750年间的欧洲音乐，特点是华丽的装饰、强烈的对比和贯穿始终的通奏低音。巴赫、亨德尔和维瓦尔第是这一时期的代表作曲家。'),
        ('歌剧',
         '歌剧是以歌唱为主、配合管弦乐伴奏来讲述故事的舞台艺术，大约在1600年前后起源于意大利。莫扎特、威尔第和普契尼都是著名的歌剧作曲家。'),
        ('爵士乐',
         '爵士乐是20世纪初在美国非裔社群中诞生的音乐风格，融合了布鲁斯、拉格泰姆和铜管乐的传统。它以摇摆的节奏和即兴演奏著称。'),
        ('京剧',
         '京剧是中国影响最大的戏曲剧种之一，形成于清代，吸收了徽剧、汉剧等多种地方戏的精华。它以唱、念、做、打为基本表演手段，角色分为生、旦、净、丑四大行当。'),
        ('书法',
         '书法是用毛笔书写汉字的艺术，讲究笔法、结构和章法。常见的书体有篆书、隶书、楷书、行书和草书，东晋的王羲之被尊为“书圣”。'),
        ('水墨画',
         '水墨画是中国传统绘画形式，主要用水和墨在宣纸上作画，通过墨色的浓淡干湿来表现层次和意境。它讲究留白和写意，追求神似而不仅仅是形似。'),
        ('唐诗',
         '唐诗是唐代诗歌的统称，代表了中国古典诗歌的高峰，题材广泛，形式上包括古体诗和讲究格律的近体诗。李白、杜甫、白居易都是唐代著名的诗人。'),
        ('宋词',
         '宋词是宋代盛行的一种诗歌形式，按照词牌规定的格律填写，句子长短不一，原本可以配乐演唱。苏轼、辛弃疾和李清照都是著名的词人。'),
        ('透视法',
         '透视法是在平面上表现立体空间的绘画技法，让平行线在远处汇聚到消失点，从而产生纵深感。它在文艺复兴时期由布鲁内莱斯基等人系统地发展起来。'),
        ('超现实主义',
         '超现实主义是20世纪20年代兴起的文艺运动，探索梦境、潜意识和非理性的意象。达利和马格利特是其代表画家。'),
        ('对联',
         '对联是贴在门两侧或挂在厅堂里的成对文字，上下联字数相等、词性相对、平仄协调。春节时贴的春联就是最常见的对联。'),
        ('堆肥',
         '堆肥是让厨余、落叶等有机废物在微生物作用下分解，变成肥沃的腐殖质。好的堆肥需要富含氮的“绿色”材料和富含碳的“棕色”材料合理搭配，并保持通气和适当湿润。'),
        ('断舍离',
         '断舍离是一种生活理念，主张断绝不需要的东西、舍弃多余的物品、脱离对物品的执念。它源自日本作家山下英子的著作，核心是让生活更简单、更专注。'),
        ('拖延症',
         '拖延症是指明知拖延会带来不良后果，却仍然一再推迟要做的事情。研究认为它更多与逃避负面情绪有关，而不是单纯的懒惰，把任务拆成小步骤会有帮助。'),
        ('胆固醇',
         '胆固醇是一种脂类物质，人体需要它来构建细胞膜、合成激素和维生素D。低密度脂蛋白胆固醇（俗称“坏”胆固醇）过高会沉积在血管壁上，而高密度脂蛋白胆固醇（“好”胆固醇）有助于把它运走。'),
        ('肠道菌群',
         '肠道菌群是生活在人体消化道里的大量细菌和其他微生物。它们帮助消化食物、合成某些维生素并调节免疫，多吃富含膳食纤维的多样化食物有利于维持菌群健康。'),
        ('过敏',
         '过敏是免疫系统对花粉、尘螨或某些食物等本来无害的物质反应过度。身体会释放组胺等物质，引起打喷嚏、皮肤瘙痒、起疹子，严重时甚至会发生过敏性休克。'),
        ('血型',
         '血型是根据红细胞表面抗原划分的类型，最常用的是ABO血型系统（A、B、AB、O型）和Rh血型系统（阳性或阴性）。输血时血型必须相容，否则免疫系统会攻击输入的血液。'),
        ('有氧运动',
         '有氧运动是指快走、跑步、游泳、骑车等能持续较长时间、让心跳和呼吸加快的运动。它能增强心肺功能、提高耐力，还有助于改善情绪。'),
        ('快速眼动睡眠',
         '快速眼动睡眠是睡眠的一个阶段，这时大脑非常活跃，眼球快速转动，人们做的生动的梦大多出现在这个阶段。它每晚会反复出现好几次，被认为有助于巩固记忆和调节情绪。'),
        ('近视',
         '近视是指看近处清楚、看远处模糊，原因是眼睛把远处物体的光线聚焦在了视网膜前方。通常可以用框架眼镜、隐形眼镜或激光手术矫正，儿童多到户外活动有助于预防近视。'),
        ('脱水',
         '脱水是身体流失的水分多于摄入的水分，会出现口渴、尿色变深、乏力、头痛和头晕等症状。平时要及时补水，尤其是在炎热环境中或运动时，严重脱水需要及时就医。'),
        ('安慰剂效应',
         '安慰剂效应是指病人因为相信治疗有效，即使服用的是没有药效成分的“假药”，症状也真的有所改善。正因如此，新药试验通常要与安慰剂进行对照。'),
        ('正念',
         '正念是有意识地、不加评判地把注意力放在此刻的体验上，比如呼吸、身体的感受和脑中的念头。研究表明，规律的正念练习有助于减轻压力和焦虑。'),
        ('加密技术',
         '加密技术是用数学算法和密钥把信息变成他人看不懂的密文，只有持有正确密钥的人才能把它还原。它保护着我们的聊天记录、密码和网上支付等信息的安全。'),
        ('云计算',
         '云计算是通过互联网按需使用服务商数据中心里的服务器、存储和软件等计算资源，而不必自己购买和维护设备。用户通常按使用量付费，并且可以快速扩容或缩减。'),
        ('开源软件',
         '开源软件是源代码公开的软件，任何人都可以在许可证允许的范围内查看、修改和分发它。Linux、火狐浏览器和Python都是著名的开源项目。'),
        ('算法',
         '算法是为解决某个问题而设计的一系列明确、有限的步骤。从数据排序、导航路线规划到搜索结果排名，计算机处处都依赖算法。'),
        ('计算机病毒',
         '计算机病毒是一种能自我复制、通过感染其他程序或文件来传播的恶意程序，可能破坏数据或窃取信息。及时更新系统、安装安全软件、不随意打开陌生链接和附件可以有效防范。'),
        ('编程语言',
         '编程语言是人们用来给计算机编写指令的形式化语言，有严格的语法规则。常见的有Python、Java和C语言，它们各有擅长的应用场景。'),
        ('供求关系',
         '供求关系说明了市场上商品的供给和需求如何共同决定价格：需求增加或供给减少时价格往往上涨，反之则下降。最终价格会趋向于买方愿意购买的数量与卖方愿意出售的数量相等的均衡点。'),
        ('机会成本',
         '机会成本是指做出选择时所放弃的其他选项中价值最高的那一个。比如，你用一个晚上来学习，机会成本就是这个晚上本可以用来做的其他事情。'),
        ('城市化',
         '城市化是指人口从农村向城镇集中、城镇规模不断扩大的过程。它能推动经济发展和技术进步，但也会带来住房紧张、交通拥堵和环境污染等问题。'),
        ('全球化',
         '全球化是指世界各地在经济、文化、科技和人员往来方面联系日益紧密的趋势。它促进了贸易和思想交流，但也引发了人们对贫富差距和本地就业的担忧。'),
        ('科学方法',
         '科学方法是通过观察提出问题、形成可以检验的假设、设计实验、分析数据并据此修正结论的研究方式。一项结论只有能被他人重复验证，才更值得信赖。'),
        ('批判性思维',
         '批判性思维是在接受某个观点之前，先审视它的前提、评估证据、识别逻辑漏洞的思考习惯。它能帮助我们做出更好的判断，不被错误信息误导。'),
        ('人口老龄化',
         '人口老龄化是指老年人口在总人口中所占比例不断上升的现象，主要原因是生育水平下降和人均寿命延长。它给养老保障、医疗服务和劳动力供给都带来了挑战。'),
        ('儒家思想',
         '儒家思想是孔子在春秋时期创立的学说，强调仁、义、礼、智、信，重视道德修养、孝道和社会秩序。它对中国以及东亚的文化和政治产生了长达两千多年的深远影响。'),
        ('道家思想',
         '道家思想以老子和庄子为代表，主张“道法自然”和“无为”，提倡顺应自然、清静淡泊。《道德经》是道家最重要的经典。'),
        ('越位规则',
         '足球比赛中，在队友传球的瞬间，如果进攻球员位于对方半场，而且比球和对方倒数第二名防守球员都更靠近对方球门线，并参与了进攻，就会被判越位。这条规则防止进攻球员一直守在对方球门前等球。'),
        ('太极拳',
         '太极拳是中国传统武术的一种，动作缓慢柔和、连绵不断，讲究以柔克刚，并让意念与呼吸相配合。经常练习太极拳有助于改善平衡能力和柔韧性，也能放松身心。'),
        ('瑜伽',
         '瑜伽起源于古印度，是把体式练习、呼吸调节和冥想结合在一起的修身方法。规律练习可以提高柔韧性、力量和平衡感，并帮助缓解压力。'),
        ('发酵',
         '发酵是酵母、细菌等微生物分解糖类等物质，产生酸、气体或酒精的过程。酸奶、馒头、酱油、醋、泡菜和酒都离不开发酵。'),
        ('美拉德反应',
         '美拉德反应是食物中的氨基酸和还原糖在加热时发生的化学反应，会让食物变成褐色并产生诱人的香气。烤面包的外皮、煎牛排和烘焙咖啡豆的香味都来自它。'),
        ('咖啡因',
         '咖啡因是存在于咖啡、茶、可可和部分饮料中的天然兴奋剂，它通过阻断让人犯困的腺苷来起到提神作用。摄入过多可能导致心慌、焦虑和失眠。'),
        ('豆腐',
         '豆腐是把黄豆浸泡、磨浆、煮沸后，用卤水或石膏使豆浆中的蛋白质凝固而制成的食品。相传它由西汉淮南王刘安发明，富含优质植物蛋白。'),
        ('乌龙茶',
         '乌龙茶是一种半发酵茶，发酵程度介于绿茶和红茶之间，兼有绿茶的清香和红茶的醇厚。铁观音和大红袍都属于乌龙茶。'),
        ('饺子',
         '饺子是用面皮包上馅料后煮、蒸或煎制而成的传统食品，相传与东汉医学家张仲景有关。在中国北方，春节吃饺子是重要的习俗。'),
        ('歇后语',
         '歇后语是由前后两部分组成的俏皮话，前半部分像谜面，后半部分像谜底，例如“外甥打灯笼——照旧（舅）”。说话时常常只说前半句，让听的人自己领会后半句的意思。'),
        ('六书',
         '六书是古人总结的汉字构造和使用方法，包括象形、指事、会意、形声、转注和假借。其中形声字数量最多，由表示意义的形旁和表示读音的声旁组成。'),
        ('汉语拼音',
         '汉语拼音是用拉丁字母给汉字注音的方案，1958年正式公布推行。它帮助人们学习普通话的发音，也是常用的汉字输入方式。'),
        ('方言',
         '方言是同一种语言在不同地区形成的变体，有自己独特的语音、词汇和语法。汉语方言通常分为官话、吴语、粤语、闽语等几大类，有些方言之间差别很大，几乎无法互相听懂。'),
        ('手语',
         '手语是用手势、动作、面部表情和身体姿态来交流的完整的自然语言，有自己的语法体系。不同地区的手语各不相同，它也不是口语的逐字对应。'),
        ('拟声词',
         '拟声词是模仿声音的词，比如“哗啦”“叮咚”“汪汪”。不同语言对同一种声音的模仿往往并不一样。'),
        ('比喻',
         '比喻是一种修辞手法，用一个事物来描写另一个与它有相似之处的事物，比如“她的笑容像花儿一样”。它通常分为明喻、暗喻和借喻。'),
        ('简化字',
         '简化字是把笔画繁多的汉字加以简化后的字形，比如把“體”简化为“体”。它从20世纪50年代起大规模推行，目的是让汉字更容易学、更容易写。'),
        ('认知失调',
         '认知失调是指人同时持有相互矛盾的观念，或者行为与信念不一致时产生的心理不适。人们常常通过改变想法、为行为找理由或回避相反的信息来减轻这种不适。'),
        ('确认偏误',
         '确认偏误是指人们倾向于寻找、注意和记住支持自己已有观点的信息，而忽视相反的证据。主动寻找反对意见有助于减少这种偏差。'),
        ('邓宁-克鲁格效应',
         '邓宁-克鲁格效应是一种认知偏差：能力不足的人往往高估自己的水平，部分原因是他们缺乏发现自身错误所需的知识。它由心理学家邓宁和克鲁格在1999年提出。'),
        ('马斯洛需求层次理论',
         '马斯洛需求层次理论把人的需求从低到高分为生理、安全、爱与归属、尊重和自我实现五个层次。马斯洛在1943年提出这一理论，认为较低层次的需求通常要先得到满足。'),
        ('成长型思维',
         '成长型思维是相信能力和智力可以通过努力、好的方法以及从错误中学习而不断提升的心态。这一概念由心理学家卡罗尔·德韦克提出，与“固定型思维”相对。'),
        ('条件反射',
         '条件反射是指原本中性的刺激与某种有意义的刺激反复配对后，也能单独引发相同反应的学习现象。巴甫洛夫发现，狗在某种声音与食物多次配对后，一听到这种声音就会分泌唾液。'),
        ('冒名顶替综合征',
         '冒名顶替综合征是指即使取得了成就，仍然觉得自己能力不够、只是运气好，并担心被别人“识破”。它在成功人士中很常见，但并不是正式的医学诊断。'),
        ('旁观者效应',
         '旁观者效应是指在紧急情况下，在场的人越多，每个人出手相助的可能性反而越低，因为责任被分散了。直接指定某个人求助可以有效打破这种效应。'),
        ('内向性格',
         '内向的人往往在独处或安静的环境中恢复精力，而大量社交会让他们感到疲惫。内向并不等于害羞，大多数人其实处在内向和外向之间。'),
        ('情商',
         '情商是指识别、理解和管理自己情绪，并能察觉和妥善回应他人情绪的能力。较高的情商有助于建立良好的人际关系和团队合作。'),
        ('心流',
         '心流是指人完全沉浸在有挑战性但又力所能及的活动中，专注而愉悦、甚至忘了时间流逝的状态。这一概念由心理学家米哈里·契克森米哈赖提出。'),
    ],
    "en": [
        ('photosynthesis',
         'Photosynthesis is the process plants, algae and some bacteria use to turn sunlight, water and '
         'carbon dioxide into sugar, releasing oxygen as a by-product. In plants it takes place mainly in '
         'the chloroplasts of leaf cells.'),
        ('natural selection',
         'Natural selection is the process by which individuals with traits better suited to their '
         'environment tend to survive and reproduce more, so those inherited traits become more common '
         'over generations. It is the main mechanism of evolution described by Charles Darwin.'),
        ('plate tectonics',
         "Plate tectonics is the theory that Earth's outer shell is broken into large rigid plates that "
         'slowly move over the hotter, softer mantle beneath. Their movements build mountain ranges, open '
         'and close oceans and drive most volcanic activity.'),
        ('the theory of relativity',
         "Einstein's theory of relativity says that measurements of space and time depend on how an "
         'observer is moving, and that gravity is the curving of spacetime by mass and energy. It has two '
         'parts: special relativity (1905) and general relativity (1915).'),
        ('the periodic table',
         'The periodic table arranges the chemical elements by atomic number in rows and columns, so that '
         'elements with similar properties fall in the same column. Dmitri Mendeleev published an early '
         'version in 1869 and used its gaps to predict elements not yet discovered.'),
        ('the Big Bang theory',
         'The Big Bang theory says the universe began in an extremely hot, dense state about 13.8 billion '
         'years ago and has been expanding and cooling ever since. Key evidence includes the cosmic '
         'microwave background and the redshift of distant galaxies.'),
        ('entropy',
         'Entropy is a measure of how many ways the parts of a system can be arranged, often described '
         'loosely as disorder. The second law of thermodynamics says the total entropy of an isolated '
         'system never decreases, which is why heat flows from hot things to cold ones.'),
        ('the immune system',
         "The immune system is the body's defence network of cells, tissues and organs that detects and "
         'destroys germs such as bacteria and viruses. It has a fast, general innate part and a slower '
         'adaptive part that remembers past infections.'),
        ('antibiotics',
         'Antibiotics are medicines that kill bacteria or stop them from multiplying; they do not work '
         'against viral illnesses such as colds or flu. Overusing them helps bacteria evolve resistance, '
         'so they should only be taken when needed and exactly as prescribed.'),
        ('mitochondria',
         'Mitochondria are small structures inside most cells that use oxygen to turn nutrients into ATP, '
         'the chemical energy cells run on. They carry their own small set of DNA, a clue that they '
         'descended from ancient bacteria.'),
        ('static electricity',
         'Static electricity is a build-up of electric charge on the surface of an object, usually when '
         'two materials rub together and electrons move from one to the other. The little shock you get '
         'from a doorknob is that charge suddenly jumping away.'),
        ('magnetism',
         'Magnetism is a force produced by moving electric charges and by the aligned spins of electrons '
         'in materials such as iron. Every magnet has a north and a south pole; opposite poles attract and '
         'like poles repel.'),
        ('the Doppler effect',
         'The Doppler effect is the change in frequency of a wave when its source moves towards or away '
         'from you, which is why a siren sounds higher as it approaches and lower as it passes. '
         'Astronomers use the same effect with light to tell whether stars and galaxies are moving towards '
         'or away from us.'),
        ('nuclear fusion',
         'Nuclear fusion is the process in which light atomic nuclei, such as hydrogen, join to form a '
         'heavier nucleus and release a huge amount of energy. It powers the Sun and other stars, and '
         'scientists are working to harness it for clean electricity.'),
        ('radioactivity',
         'Radioactivity is the process by which unstable atomic nuclei break down on their own, giving off '
         'radiation such as alpha particles, beta particles or gamma rays. It was discovered by Henri '
         'Becquerel in 1896 and studied extensively by Marie and Pierre Curie.'),
        ('viruses',
         'Viruses are tiny infectious particles made of genetic material wrapped in a protein coat, and '
         'they can only reproduce by hijacking a living cell. Because they are not cells themselves, '
         'antibiotics have no effect on them.'),
        ('the circulatory system',
         'The circulatory system is the heart, blood and blood vessels working together to carry oxygen, '
         'nutrients and hormones around the body and remove waste. The heart pumps blood out through '
         'arteries, and veins carry it back.'),
        ('neurons',
         'Neurons are nerve cells that carry information as electrical signals and pass it on to other '
         'cells using chemical messengers called neurotransmitters. The human brain contains roughly 86 '
         'billion of them.'),
        ('the phases of the Moon',
         "The Moon's phases are the changing shapes we see as it orbits Earth and different amounts of its "
         'sunlit half face us. A full cycle from new moon back to new moon takes about a month.'),
        ('rainbows',
         'A rainbow forms when sunlight enters raindrops, bends, reflects off the back of each drop and '
         'bends again on the way out, splitting white light into its colours. That is why you see one when '
         'the sun is behind you and rain is in front of you.'),
        ('the ozone layer',
         "The ozone layer is a region of the stratosphere rich in ozone gas that absorbs most of the Sun's "
         'harmful ultraviolet radiation. It was thinned by chemicals such as CFCs, and since these were '
         'phased out by international agreement it has been slowly recovering.'),
        ('coral reefs',
         'Coral reefs are underwater structures built from the limestone skeletons of tiny animals called '
         'coral polyps, which live in partnership with algae. They cover only a small fraction of the '
         'ocean floor yet shelter roughly a quarter of all marine species.'),
        ('pollination',
         'Pollination is the transfer of pollen from the male part of a flower to the female part, which '
         'allows the plant to produce seeds. Wind, water and animals such as bees, butterflies, birds and '
         'bats carry the pollen.'),
        ('bird migration',
         'Bird migration is the seasonal journey many birds make between their breeding grounds and '
         'wintering grounds, mostly to follow food and good nesting conditions. Birds navigate using the '
         "sun, the stars, Earth's magnetic field and landmarks."),
        ('hibernation',
         'Hibernation is a state of deep dormancy some animals enter to survive winter, sharply lowering '
         'their body temperature, heartbeat and metabolism to save energy. Ground squirrels and many bats '
         'are true hibernators, while bears go into a lighter winter sleep.'),
        ('biodiversity',
         'Biodiversity is the variety of life in a place, from genes and species to whole ecosystems. High '
         'biodiversity makes ecosystems more resilient and provides people with food, medicines and clean '
         'water.'),
        ('stem cells',
         'Stem cells are unspecialised cells that can divide to make more of themselves and can develop '
         'into specialised cell types such as blood, muscle or nerve cells. They help the body grow and '
         'repair itself, and researchers study them to treat diseases.'),
        ('the Renaissance',
         'The Renaissance was a period of European cultural revival, roughly from the 14th to the 17th '
         'century, that renewed interest in classical Greek and Roman learning. It produced artists and '
         'thinkers such as Leonardo da Vinci, Michelangelo and Galileo.'),
        ('the Industrial Revolution',
         'The Industrial Revolution was the shift from hand production to machine manufacturing that began '
         'in Britain in the late 18th century. Steam power, factories and railways transformed work, towns '
         'and living standards.'),
        ('the Cold War',
         'The Cold War was the long rivalry between the United States and the Soviet Union and their '
         'allies, lasting from the late 1940s until 1991. It was waged through an arms race, the space '
         'race, propaganda and proxy wars rather than direct fighting between the two superpowers.'),
        ('the Silk Road',
         'The Silk Road was a network of trade routes linking East Asia with Central Asia, the Middle East '
         'and Europe from around the 2nd century BCE. Along with silk and spices, it carried ideas, '
         'religions, technologies and even diseases.'),
        ('the Roman Empire',
         'The Roman Empire began when Augustus became emperor in 27 BCE and at its height surrounded the '
         'entire Mediterranean. Its western half fell in 476 CE, while the eastern, Byzantine half lasted '
         'until 1453.'),
        ('the Bronze Age',
         'The Bronze Age is the period when people made tools and weapons from bronze, an alloy of copper '
         'and tin, beginning around 3300 BCE in the Near East. It saw the rise of early cities, writing '
         'and long-distance trade.'),
        ('the Enlightenment',
         'The Enlightenment was an 18th-century intellectual movement in Europe that championed reason, '
         'science, individual rights and scepticism of tradition. Thinkers such as Locke, Voltaire and '
         'Kant shaped modern ideas about democracy and human rights.'),
        ('the Black Death',
         'The Black Death was a devastating plague pandemic that swept through Europe, Asia and North '
         'Africa in the mid-1300s, peaking between 1347 and 1351. Caused by the bacterium Yersinia pestis, '
         "it killed an estimated third or more of Europe's population."),
        ('cuneiform',
         'Cuneiform is one of the earliest known writing systems, developed by the Sumerians in ancient '
         'Mesopotamia around 3200 BCE. It was written by pressing wedge-shaped marks into clay tablets '
         'with a reed stylus.'),
        ('feudalism',
         'Feudalism was the social and political system of medieval Europe in which lords granted land to '
         'vassals in exchange for military service and loyalty. Peasants, or serfs, worked the land and '
         'owed labour to their lord in return for protection.'),
        ('the Magna Carta',
         'The Magna Carta is a charter agreed by King John of England in 1215 that limited royal power and '
         'established that even the king was subject to the law. It became a lasting symbol of individual '
         'rights and the rule of law.'),
        ('the Reformation',
         'The Reformation was a 16th-century religious movement that split Western Christianity, sparked '
         'when Martin Luther challenged practices of the Catholic Church in 1517. It gave rise to '
         'Protestant churches and reshaped European politics and culture.'),
        ('the Vikings',
         'The Vikings were seafaring Scandinavians who raided, traded and settled across Europe and beyond '
         'from the late 8th to the 11th century. Skilled shipbuilders, they reached as far as North '
         'America around the year 1000.'),
        ('Impressionism',
         'Impressionism was a 19th-century art movement that tried to capture fleeting light, colour and '
         'everyday moments using quick, visible brushstrokes. Claude Monet, Pierre-Auguste Renoir and '
         'Edgar Degas are among its best-known painters.'),
        ('the sonnet',
         'A sonnet is a 14-line poem with a set rhyme scheme, traditionally about love or reflection. The '
         'Petrarchan form divides into an octave and a sestet, while the Shakespearean form has three '
         'quatrains and a closing couplet.'),
        ('Baroque music',
         'Baroque music is European music from roughly 1600 to 1750, known for ornate melodies, dramatic '
         'contrast and a continuous bass line called basso continuo. Bach, Handel and Vivaldi are its most '
         'famous composers.'),
        ('Cubism',
         'Cubism was an early 20th-century art movement led by Pablo Picasso and Georges Braque that broke '
         'objects into geometric shapes and showed them from several viewpoints at once. It changed how '
         'artists thought about representing space.'),
        ('opera',
         'Opera is a form of theatre in which the story is told mainly through singing, accompanied by an '
         'orchestra. It originated in Italy around 1600, and famous opera composers include Mozart, Verdi '
         'and Puccini.'),
        ('jazz',
         'Jazz is a music genre that grew out of African American communities in the southern United '
         'States in the early 20th century, blending blues, ragtime and brass-band traditions. It is known '
         'for swing rhythms, improvisation and expressive solos.'),
        ('haiku',
         'A haiku is a short Japanese poetic form with three lines of five, seven and five syllables, or '
         'sound units. It traditionally captures a single moment in nature and includes a seasonal '
         'reference.'),
        ('linear perspective',
         'Linear perspective is a drawing technique that creates the illusion of depth on a flat surface '
         'by making parallel lines converge at a vanishing point on the horizon. Renaissance artists such '
         'as Filippo Brunelleschi developed it in the early 1400s.'),
        ("the hero's journey",
         "The hero's journey is a common story pattern, described by Joseph Campbell, in which a hero "
         'leaves the ordinary world, faces trials, wins a decisive victory and returns transformed. Many '
         'myths and films, such as Star Wars, follow it.'),
        ('ballet',
         'Ballet is a formal style of dance that began in the courts of Renaissance Italy and was '
         'developed further in France and Russia. It is known for precise technique, turned-out legs, '
         'pointe work and telling stories through movement.'),
        ('composting',
         'Composting is the natural breakdown of food scraps, leaves and other organic waste into a rich '
         'soil conditioner called compost. It works best with a balance of nitrogen-rich green material '
         'and carbon-rich brown material, plus air and moisture.'),
        ('minimalism',
         'Minimalism is a lifestyle of owning fewer things and focusing on what truly adds value, in order '
         'to reduce clutter, stress and spending. It is also an art and design style known for simple '
         'forms and plenty of empty space.'),
        ('procrastination',
         'Procrastination is putting off tasks even though you expect the delay to leave you worse off. '
         'Research suggests it is more about avoiding unpleasant feelings than about laziness, and '
         'breaking tasks into small steps can help.'),
        ('REM sleep',
         'REM (rapid eye movement) sleep is a stage of sleep in which the brain is very active, the eyes '
         'dart about and most vivid dreaming happens. It recurs several times a night and is thought to '
         'help with memory and emotional processing.'),
        ('cholesterol',
         'Cholesterol is a waxy, fat-like substance the body needs to build cells and make hormones and '
         "vitamin D. Too much LDL ('bad') cholesterol can build up in artery walls, while HDL ('good') "
         'cholesterol helps carry it away.'),
        ('the gut microbiome',
         'The gut microbiome is the vast community of bacteria and other microbes living in your digestive '
         'tract. It helps digest food, make certain vitamins and train the immune system, and a varied, '
         'fibre-rich diet helps keep it healthy.'),
        ('dehydration',
         'Dehydration happens when your body loses more water than it takes in, causing thirst, dark '
         'urine, tiredness, headaches and dizziness. Drinking fluids regularly, especially in hot '
         'conditions or during exercise, prevents it, and severe cases need medical care.'),
        ('allergies',
         'An allergy is an overreaction of the immune system to a normally harmless substance such as '
         'pollen, dust mites or certain foods. The reaction releases chemicals like histamine, causing '
         'sneezing, itching or rashes and, in severe cases, life-threatening anaphylaxis.'),
        ('blood types',
         'Blood types are groups based on markers called antigens on red blood cells, mainly the ABO '
         'system (A, B, AB and O) and the Rh factor (positive or negative). Matching them matters for '
         'transfusions, because the immune system attacks incompatible blood.'),
        ('aerobic exercise',
         'Aerobic exercise is sustained activity such as brisk walking, running, swimming or cycling that '
         'raises your heartbeat and breathing for an extended period. It strengthens the heart and lungs '
         'and improves endurance and mood.'),
        ('myopia',
         'Myopia, or nearsightedness, means nearby objects look clear but distant ones look blurry, '
         'because the eye focuses light in front of the retina. It is usually corrected with glasses, '
         "contact lenses or laser surgery, and time spent outdoors may help lower children's risk."),
        ('the placebo effect',
         'The placebo effect is a real improvement in symptoms that happens because a person expects a '
         'treatment to work, even when it contains no active ingredient. It is why new medicines are '
         'tested against dummy pills in clinical trials.'),
        ('encryption',
         'Encryption scrambles data using a mathematical key so that only someone with the right key can '
         'read it. It protects things like private messages, passwords and online payments from '
         'eavesdroppers.'),
        ('cloud computing',
         'Cloud computing means using computing resources such as storage, servers and software over the '
         "internet from a provider's data centres instead of your own machines. You usually pay for what "
         'you use and can scale up or down quickly.'),
        ('open-source software',
         'Open-source software is software whose source code is publicly available for anyone to read, '
         'modify and share under a licence. Well-known examples include Linux, Firefox and Python.'),
        ('malware',
         'Malware is any software designed to harm or exploit computers or their users, including viruses, '
         'worms, ransomware and spyware. Keeping software updated, using security tools and avoiding '
         'suspicious links and downloads help protect against it.'),
        ('algorithms',
         'An algorithm is a precise, step-by-step set of instructions for solving a problem or completing '
         'a task. Computers rely on algorithms for everything from sorting lists to finding routes and '
         'ranking search results.'),
        ('search engines',
         'A search engine is a system that crawls the web, indexes the pages it finds and ranks them to '
         'answer your queries. Ranking uses signals such as how relevant the text is, links from other '
         'pages and overall page quality.'),
        ('programming languages',
         'A programming language is a formal language with precise rules that people use to write '
         'instructions for computers. Examples include Python, JavaScript and C, each designed with '
         'different strengths in mind.'),
        ('democracy',
         'Democracy is a system of government in which power rests with the people, who rule directly or '
         'through elected representatives. Its core features include free and fair elections, the rule of '
         'law and protection of basic rights.'),
        ('the separation of powers',
         'The separation of powers divides government into separate branches, usually legislative, '
         'executive and judicial, so that no single branch holds too much power. The idea was popularised '
         'by the philosopher Montesquieu in the 18th century.'),
        ('supply and demand',
         'Supply and demand is the economic model of how prices are set in a market: when demand rises or '
         'supply falls, prices tend to go up, and the reverse pushes them down. The market settles where '
         'the amount people want to buy matches the amount sellers offer.'),
        ('opportunity cost',
         'Opportunity cost is the value of the next-best option you give up when you make a choice. For '
         'example, the opportunity cost of spending an evening studying is whatever else you could have '
         'done with that evening.'),
        ('human rights',
         'Human rights are basic rights and freedoms that belong to every person simply because they are '
         'human, such as the right to life, liberty, equality and free expression. The Universal '
         'Declaration of Human Rights, adopted by the United Nations in 1948, set them out as a common '
         'standard.'),
        ('urbanization',
         'Urbanization is the growth of towns and cities as people move from the countryside in search of '
         'jobs, services and opportunities. It can drive economic growth and innovation but also brings '
         'challenges such as housing shortages, congestion and pollution.'),
        ('globalization',
         "Globalization is the growing interconnection of the world's economies, cultures and people "
         'through trade, investment, travel and communication technology. It has boosted growth and the '
         'spread of ideas but has also raised concerns about inequality and lost local jobs.'),
        ('the scientific method',
         'The scientific method is a way of learning about the world by observing, forming a testable '
         'hypothesis, running experiments, analysing the results and refining ideas based on the evidence. '
         'Findings earn trust when other researchers can reproduce them.'),
        ('critical thinking',
         'Critical thinking is the habit of analysing information carefully and fairly before accepting '
         'it: questioning assumptions, weighing evidence and spotting flawed reasoning. It helps you make '
         'better decisions and resist misinformation.'),
        ('Stoicism',
         'Stoicism is an ancient Greek and Roman philosophy teaching that we should focus on what is '
         'within our control, such as our judgements and actions, and accept calmly what is not. Seneca, '
         'Epictetus and Marcus Aurelius are its best-known writers.'),
        ('the offside rule',
         'In football (soccer), a player is offside if, at the moment a teammate passes the ball, they are '
         "in the opponents' half and closer to the goal line than both the ball and the second-to-last "
         'defender, and then get involved in play. The rule stops attackers from simply waiting beside the '
         'goal.'),
        ('yoga',
         'Yoga is a practice that originated in ancient India and combines physical postures, breathing '
         'exercises and meditation. Regular practice can improve flexibility, strength and balance and '
         'help reduce stress.'),
        ('basketball',
         'Basketball is a team sport invented by James Naismith in 1891, in which two teams of five try to '
         "score by shooting a ball through the opponent's hoop. Players move the ball by dribbling and "
         'passing rather than carrying it.'),
        ('fermentation',
         'Fermentation is a process in which microbes such as yeast and bacteria break down sugars, '
         'producing acids, gases or alcohol. It is used to make foods and drinks like yogurt, bread, '
         'cheese, kimchi, soy sauce and beer.'),
        ('the Maillard reaction',
         'The Maillard reaction is a chemical reaction between amino acids and sugars that browns food and '
         'creates rich, savoury flavours when it is heated. It is behind the crust on bread, the sear on a '
         'steak and the aroma of roasted coffee.'),
        ('gluten',
         'Gluten is a group of proteins found in wheat, barley and rye that gives dough its stretch and '
         'helps bread rise. People with coeliac disease must avoid it because it triggers an immune '
         'reaction that damages the small intestine.'),
        ('probiotics',
         'Probiotics are live beneficial microbes, found in foods like yogurt and kefir or taken as '
         'supplements, that may support a healthy gut. Their effects depend on the specific strain, and '
         'the evidence is stronger for some uses than others.'),
        ('caffeine',
         'Caffeine is a natural stimulant found in coffee, tea, cacao and some soft drinks that makes you '
         'feel more alert by blocking adenosine, a chemical that builds up and makes you sleepy. Too much '
         'can cause jitters, a racing heart and trouble sleeping.'),
        ('sushi',
         'Sushi is a Japanese dish based on vinegared rice combined with ingredients such as raw or cooked '
         'fish, other seafood, vegetables and seaweed. It began as a way of preserving fish by packing it '
         'in fermented rice.'),
        ('etymology',
         'Etymology is the study of where words come from and how their forms and meanings have changed '
         "over time. For example, 'disaster' comes from roots meaning 'bad star', reflecting an old belief "
         'that the stars shaped events.'),
        ('the passive voice',
         'The passive voice is a sentence structure in which the subject receives the action instead of '
         "doing it, as in 'The cake was eaten by the dog' rather than 'The dog ate the cake.' It is useful "
         'when the doer is unknown or unimportant, but overusing it can make writing vague.'),
        ('dialects',
         'A dialect is a variety of a language linked to a particular region or social group, with its own '
         'vocabulary, pronunciation and grammar. The line between a dialect and a separate language is '
         'often as much political as linguistic.'),
        ('sign language',
         'Sign languages are full natural languages that use hand shapes, movements, facial expressions '
         'and body posture instead of sound. Each has its own grammar, and different communities use '
         'different sign languages, such as ASL and BSL.'),
        ('onomatopoeia',
         "Onomatopoeia is a word that imitates the sound it describes, like 'buzz', 'sizzle', 'bang' or "
         "'meow'. Different languages often render the same sound quite differently."),
        ('metaphors',
         'A metaphor is a figure of speech that describes something by saying it is something else, as in '
         "'all the world's a stage', to suggest a likeness. Unlike a simile, it does not use 'like' or "
         "'as'."),
        ('cognitive dissonance',
         'Cognitive dissonance is the mental discomfort people feel when they hold conflicting beliefs or '
         'when their actions clash with their values. People often ease it by changing a belief, '
         'justifying the behaviour or avoiding contradictory information.'),
        ('confirmation bias',
         'Confirmation bias is the tendency to seek out, notice and remember information that supports '
         'what we already believe while discounting evidence against it. Deliberately looking for '
         'counterarguments helps to counter it.'),
        ('the Dunning-Kruger effect',
         'The Dunning-Kruger effect is a cognitive bias in which people with low skill in an area tend to '
         'overestimate their ability, partly because they lack the knowledge to spot their own mistakes. '
         'Psychologists David Dunning and Justin Kruger described it in 1999.'),
        ("Maslow's hierarchy of needs",
         "Maslow's hierarchy of needs is a theory that ranks human needs in a pyramid, from physiological "
         'needs and safety up through love and belonging and esteem to self-actualization. Abraham Maslow '
         'proposed it in 1943, arguing that lower needs generally have to be met before higher ones.'),
        ('growth mindset',
         'A growth mindset is the belief that abilities and intelligence can be developed through effort, '
         'good strategies and learning from mistakes. The idea comes from psychologist Carol Dweck, who '
         'contrasted it with a fixed mindset.'),
        ('classical conditioning',
         'Classical conditioning is a type of learning in which a neutral signal becomes linked to '
         'something meaningful, so that it comes to trigger the same response. Ivan Pavlov demonstrated it '
         'when dogs learned to salivate at a sound that had been paired with food.'),
        ('impostor syndrome',
         'Impostor syndrome is the persistent feeling that you are not as capable as others think and will '
         'be exposed as a fraud, despite evidence of your success. It is common among high achievers and '
         'is not a formal medical diagnosis.'),
        ('the bystander effect',
         'The bystander effect is the finding that people are less likely to help someone in an emergency '
         'when other people are present, because responsibility feels shared. Asking a specific person '
         'directly for help can overcome it.'),
        ('introversion',
         'Introversion is a personality trait in which people tend to recharge through quiet, solitary '
         'time and feel drained by a lot of social interaction. It is not the same as shyness, and most '
         'people fall somewhere between introversion and extraversion.'),
        ('short-term memory',
         'Short-term memory is the system that holds a small amount of information in mind for a brief '
         'period, such as a phone number you have just heard. Classic research put its capacity at about '
         'seven items, though newer estimates are closer to four chunks.'),
    ],
}
